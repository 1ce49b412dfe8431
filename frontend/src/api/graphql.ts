// A small GraphQL-over-HTTP client: one POST per typed operation (src/gql), union errors unwrapped.
// Callers branch on `ApiError.code` (a domain error's `code`, a query error's `extensions.code`), never on text.
import type { TypedDocumentString } from "../gql/graphql";
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

/** A GraphQL error as the server sends it; `extensions.code` may be missing (an older or foreign server). */
export interface WireError {
  message: string;
  extensions?: { code?: unknown } | null;
}

/** The first error's code, if the server gave one. */
export function wireErrorCode(errors: readonly WireError[]): string | undefined {
  const code = errors.find((e) => typeof e.extensions?.code === "string")?.extensions?.code;
  return typeof code === "string" ? code : undefined;
}

export function wireErrorsToApiError(errors: readonly WireError[]): ApiError {
  return new ApiError(errors.map((e) => e.message).join("; "), "graphql", wireErrorCode(errors));
}

const TIMEOUT_MS = 20_000;

export async function gql<R, V>(document: TypedDocumentString<R, V>, ...[variables]: OptionalVariables<V>): Promise<R> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch("/graphql", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json", ...authHeaders() },
      body: JSON.stringify({ query: document.toString(), variables: variables ?? {} }),
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
  let body: { data?: R | null; errors?: WireError[] };
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`The server answered ${response.status} without GraphQL data.`, "network");
  }
  if (body.errors?.length) throw wireErrorsToApiError(body.errors);
  if (!body.data) throw new ApiError("The server sent no data.", "graphql");
  return body.data;
}

/** Variables may be left out only when the operation has none. */
export type OptionalVariables<V> = V extends Record<string, never> ? [variables?: V] : [variables: V];

/** Every mutation answers a union of its payload and error types; the errors select `...ErrorFields`. */
type Failure = { __typename: `${string}Error`; message: string; code: string };

export function unwrap<R extends { __typename: string }>(result: R): Exclude<R, Failure> {
  if (isFailure(result)) throw new ApiError(result.message || "The request was refused.", "domain", result.code);
  return result as Exclude<R, Failure>;
}

function isFailure(result: { __typename: string }): result is Failure {
  return result.__typename.endsWith("Error");
}

export function errorCode(error: unknown): string | undefined {
  return error instanceof ApiError ? error.code : undefined;
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** A `JSON` scalar's value as an object (anything else as an empty one), for fields the client reads by name. */
export function jsonObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
