// A small GraphQL-over-HTTP client: one POST per operation, typed results, union errors unwrapped.
import { authHeaders, markTokenNeeded } from "./auth";

export type ErrorKind = "auth" | "network" | "graphql" | "domain";

export class ApiError extends Error {
  constructor(
    message: string,
    readonly kind: ErrorKind,
    readonly code?: string,
  ) {
    super(message);
  }
}

const TIMEOUT_MS = 20_000;

export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch("/graphql", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json", ...authHeaders() },
      body: JSON.stringify({ query, variables }),
      signal: controller.signal,
    });
  } catch {
    throw new ApiError("The server can't be reached. Check that kandev is running.", "network");
  } finally {
    clearTimeout(timer);
  }
  if (response.status === 401) {
    markTokenNeeded();
    throw new ApiError("A personal access token is required.", "auth");
  }
  let body: { data?: T; errors?: { message: string }[] };
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`The server answered ${response.status} without GraphQL data.`, "network");
  }
  if (body.errors?.length) {
    throw new ApiError(body.errors.map((e) => e.message).join("; "), "graphql");
  }
  if (!body.data) throw new ApiError("The server sent no data.", "graphql");
  return body.data;
}

/** Every mutation answers a union of its payload and error types; errors carry `message` and `code`. */
export type MaybeError = { __typename: string; message?: string; code?: string };

export function unwrap<P extends MaybeError>(result: P): P {
  if (result.__typename.endsWith("Error")) {
    throw new ApiError(result.message ?? "The request was refused.", "domain", result.code);
  }
  return result;
}

/** The error fragment every mutation selects. */
export const ERROR_FIELDS = "__typename ... on Error { message code }";

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
