// Operator clarifications (ask_user_question_kandev) and what an autopilot child waits on.
// These parts of the API arrive with later backend issues; the client asks for them only when the
// schema has them (see state/features.ts) and shows nothing if the shape differs.
import { ERROR_FIELDS, gql, unwrap } from "./graphql";
import type { Clarification, ClarificationQuestion } from "./types";

// pendingQuestions is workspace-wide and pages by cursor; `questions` is JSON
// ([{id, prompt, title?, options?: [{label, description?}]}]).
const PENDING = `query PendingQuestions($w: ID!, $after: String) {
  pendingQuestions(workspaceId: $w, after: $after, limit: 200) { nodes { id taskId sessionId context questions state } nextCursor }
}`;

const ANSWER = `mutation AnswerClarification($i: AnswerClarificationInput!) {
  answerClarification(input: $i) { ${ERROR_FIELDS} }
}`;

const REJECT = `mutation RejectClarification($id: ID!) {
  rejectClarification(clarificationId: $id) { ${ERROR_FIELDS} }
}`;

const PARENT_QUESTION = `query ParentQuestion($id: ID!) {
  task(id: $id) { pendingParentQuestion { id context questions } }
}`;

type RawQuestion = Partial<ClarificationQuestion> & { prompt?: string };

function normalize(raw: { id: string; sessionId?: string | null; context?: string | null; questions?: RawQuestion[] }): Clarification {
  return {
    id: raw.id,
    sessionId: raw.sessionId ?? null,
    context: raw.context ?? "",
    questions: (raw.questions ?? []).map((q, i) => ({
      id: q.id ?? String(i),
      prompt: q.prompt ?? "",
      title: q.title ?? null,
      options: (q.options ?? []).map((o) => ({ label: o.label, description: o.description ?? null })),
    })),
  };
}

type RawClarification = { id: string; taskId: string; sessionId: string; context: string; questions: unknown; state: string };

export async function pendingClarifications(workspaceId: string, taskId: string): Promise<Clarification[]> {
  const found: Clarification[] = [];
  let after: string | null = null;
  for (let page = 0; page < 10; page++) {
    const data: { pendingQuestions: { nodes: RawClarification[]; nextCursor: string | null } } = await gql(PENDING, {
      w: workspaceId,
      after,
    });
    for (const row of data.pendingQuestions.nodes) {
      if (row.taskId !== taskId) continue;
      const questions = Array.isArray(row.questions) ? (row.questions as RawQuestion[]) : [];
      found.push(normalize({ id: row.id, sessionId: row.sessionId, context: row.context, questions }));
    }
    after = data.pendingQuestions.nextCursor;
    if (!after) break;
  }
  return found;
}

export interface ClarificationAnswer {
  questionId: string;
  selectedOptions: string[];
  customText: string | null;
}

export async function answerClarification(clarificationId: string, answers: ClarificationAnswer[]): Promise<void> {
  const data = await gql<{ answerClarification: { __typename: string } }>(ANSWER, {
    i: { clarificationId, answers },
  });
  unwrap(data.answerClarification);
}

export async function rejectClarification(clarificationId: string): Promise<void> {
  const data = await gql<{ rejectClarification: { __typename: string } }>(REJECT, { id: clarificationId });
  unwrap(data.rejectClarification);
}

export interface ParentQuestion {
  id: string;
  context: string;
  prompts: string[];
}

export async function pendingParentQuestion(taskId: string): Promise<ParentQuestion | null> {
  const data = await gql<{ task: { pendingParentQuestion: { id: string; context?: string; questions?: unknown } | null } }>(
    PARENT_QUESTION,
    { id: taskId },
  );
  const q = data.task.pendingParentQuestion;
  if (!q) return null;
  const questions = Array.isArray(q.questions) ? (q.questions as RawQuestion[]) : [];
  return { id: q.id, context: q.context ?? "", prompts: questions.map((x) => x.prompt ?? "").filter(Boolean) };
}
