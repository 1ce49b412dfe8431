// Attachments: uploaded one file per request to POST /api/v1/attachments (multipart, with the header
// Kandev-Upload: 1 that a cross-site form can't send), then named by id in createTask / sendMessage.
// Their bytes are fetched with the same credentials as /graphql and shown through blob: URLs.
import { ApiError } from "./graphql";
import { authHeaders, markTokenNeeded } from "./auth";

export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;
export const MAX_ATTACHMENTS = 10;
export const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export interface Uploaded {
  id: string;
  name: string;
  size: number;
  contentType: string;
}

export async function uploadAttachment(file: File): Promise<Uploaded> {
  if (file.size > MAX_ATTACHMENT_BYTES) throw new ApiError(`${file.name} is larger than 10 MiB.`, "domain", "VALIDATION");
  const form = new FormData();
  form.append("file", file, file.name || "pasted");
  let response: Response;
  try {
    response = await fetch("/api/v1/attachments", {
      method: "POST",
      headers: { "Kandev-Upload": "1", ...authHeaders() },
      body: form,
    });
  } catch {
    throw new ApiError("The server can't be reached. Check that kandev is running.", "network");
  }
  if (response.status === 401) {
    markTokenNeeded();
    throw new ApiError("A personal access token is required.", "auth");
  }
  const body = (await response.json().catch(() => ({}))) as Partial<Uploaded> & { error?: string; code?: string };
  if (!response.ok || !body.id) throw new ApiError(body.error ?? `The upload failed (${response.status}).`, "domain", body.code);
  return body as Uploaded;
}

const objectUrls = new Map<string, Promise<string>>();

/** A blob: URL of an attachment's bytes (fetched once per page, with the caller's credentials). */
export function attachmentObjectUrl(url: string): Promise<string> {
  let found = objectUrls.get(url);
  if (!found) {
    found = fetch(url, { headers: authHeaders() }).then(async (response) => {
      if (!response.ok) throw new ApiError(`The attachment can't be loaded (${response.status}).`, "network");
      return URL.createObjectURL(await response.blob());
    });
    found.catch(() => objectUrls.delete(url));
    objectUrls.set(url, found);
  }
  return found;
}

export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
