// Optional API parts, found by introspection, so UI for later backend features lights up by itself.
import { gql } from "../api/graphql";
import { FEATURES } from "../api/ops";

export interface Features {
  /** Mutation markStepComplete(sessionId): the real manual completion fallback. */
  markStepComplete: boolean;
  /** Operator clarifications: Query pendingQuestions + Mutation answerClarification. */
  clarifications: boolean;
  /** Session.completionPending: a gated step waits even while a question outranks it in pendingAction. */
  sessionCompletion: boolean;
  /** Task.pendingParentQuestion: what an autopilot child waits on. */
  parentQuestion: boolean;
}

export const NO_FEATURES: Features = {
  markStepComplete: false,
  clarifications: false,
  sessionCompletion: false,
  parentQuestion: false,
};

type Fields = { fields: { name: string }[] | null } | null;

export async function detectFeatures(): Promise<Features> {
  try {
    const data = await gql<{ query: Fields; mutation: Fields; task: Fields; session: Fields }>(FEATURES);
    const names = (t: Fields) => new Set((t?.fields ?? []).map((f) => f.name));
    const q = names(data.query);
    const m = names(data.mutation);
    const task = names(data.task);
    const session = names(data.session);
    return {
      markStepComplete: m.has("markStepComplete"),
      clarifications: q.has("pendingQuestions") && m.has("answerClarification"),
      sessionCompletion: session.has("completionPending"),
      parentQuestion: task.has("pendingParentQuestion"),
    };
  } catch {
    return NO_FEATURES;
  }
}
