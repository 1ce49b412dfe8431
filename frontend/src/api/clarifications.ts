// Operator clarifications (ask_user_question_kandev) and what an autopilot child waits on.
// `questions` arrives as JSON; it is normalized here for the cards (a shape it lacks shows as empty).
import { gql, unwrap } from "./graphql";
import { ANSWER_CLARIFICATION, PARENT_QUESTION, PENDING_QUESTIONS, REJECT_CLARIFICATION } from "./ops";
import type { PendingQuestionsQuery, QuestionAnswerInput } from "../gql/graphql";

/** A pending operator clarification, normalized for the card. */
export interface Clarification {
  id: string;
  sessionId: string | null;
  context: string;
  questions: ClarificationQuestion[];
}

export interface ClarificationQuestion {
  id: string;
  prompt: string;
  title: string | null;
  options: { label: string; description: string | null }[];
}

type RawQuestion = {
  id?: string;
  prompt?: string;
  title?: string | null;
  options?: { label: string; description?: string | null }[];
};

function rawQuestions(questions: unknown): RawQuestion[] {
  return Array.isArray(questions) ? (questions as RawQuestion[]) : [];
}

function normalize(raw: { id: string; sessionId: string | null; context: string; questions: unknown }): Clarification {
  return {
    id: raw.id,
    sessionId: raw.sessionId,
    context: raw.context,
    questions: rawQuestions(raw.questions).map((q, i) => ({
      id: q.id ?? String(i),
      prompt: q.prompt ?? "",
      title: q.title ?? null,
      options: (q.options ?? []).map((o) => ({ label: o.label, description: o.description ?? null })),
    })),
  };
}

export async function pendingClarifications(workspaceId: string, taskId: string): Promise<Clarification[]> {
  const found: Clarification[] = [];
  let after: string | null = null;
  for (let page = 0; page < 10; page++) {
    const data: PendingQuestionsQuery = await gql(PENDING_QUESTIONS, { w: workspaceId, t: taskId, after });
    for (const row of data.pendingQuestions.nodes) {
      if (row.taskId === taskId) found.push(normalize(row));
    }
    after = data.pendingQuestions.nextCursor;
    if (!after) break;
  }
  return found;
}

export type ClarificationAnswer = QuestionAnswerInput;

export async function answerClarification(clarificationId: string, answers: ClarificationAnswer[]): Promise<void> {
  unwrap((await gql(ANSWER_CLARIFICATION, { i: { clarificationId, answers } })).answerClarification);
}

export async function rejectClarification(clarificationId: string): Promise<void> {
  unwrap((await gql(REJECT_CLARIFICATION, { id: clarificationId })).rejectClarification);
}

export interface ParentQuestion {
  id: string;
  context: string;
  prompts: string[];
}

export async function pendingParentQuestion(taskId: string): Promise<ParentQuestion | null> {
  const q = (await gql(PARENT_QUESTION, { id: taskId })).task.pendingParentQuestion;
  if (!q) return null;
  return { id: q.id, context: q.context, prompts: rawQuestions(q.questions).map((x) => x.prompt ?? "").filter(Boolean) };
}
