// The server's hunks as the diff viewer reads them: a git-style unified patch of one file, and (from hunks read
// with a context wider than the file) both whole versions, for expanding the unchanged lines between hunks.
import type { DiffHunk, FileWithHunks } from "../../api/changesOps";

const PREFIX = { CONTEXT: " ", ADD: "+", DELETE: "-" } as const;

/** A path as git writes it in a patch header: quoted, with C escapes, when it holds anything unusual. */
export function quotedPath(prefix: string, path: string): string {
  const plain = `${prefix}${path}`;
  if (!/[\s"\\\x00-\x1f\x7f]/.test(path)) return plain;
  const escaped = plain.replace(/[\\"\t\n\r]/g, (c) => ({ "\\": "\\\\", '"': '\\"', "\t": "\\t", "\n": "\\n", "\r": "\\r" })[c]!);
  return `"${escaped}"`;
}

/** One file's hunks as a git unified diff (headers say whether it is new, deleted or renamed). */
export function unifiedPatch(file: FileWithHunks): string {
  const before = file.oldPath ?? file.path;
  const out = [`diff --git ${quotedPath("a/", before)} ${quotedPath("b/", file.path)}`];
  if (file.status === "ADDED") out.push(`new file mode ${file.newMode ?? "100644"}`);
  else if (file.status === "DELETED") out.push(`deleted file mode ${file.oldMode ?? "100644"}`);
  else if (file.oldMode && file.newMode && file.oldMode !== file.newMode) out.push(`old mode ${file.oldMode}`, `new mode ${file.newMode}`);
  if (file.status === "RENAMED" || file.status === "COPIED") {
    const verb = file.status === "RENAMED" ? "rename" : "copy";
    out.push(`similarity index ${file.additions + file.deletions === 0 ? 100 : 90}%`);
    out.push(`${verb} from ${before}`, `${verb} to ${file.path}`);
  }
  out.push(file.status === "ADDED" ? "--- /dev/null" : `--- ${quotedPath("a/", before)}`);
  out.push(file.status === "DELETED" ? "+++ /dev/null" : `+++ ${quotedPath("b/", file.path)}`);
  for (const hunk of file.hunks) {
    out.push(hunk.header);
    for (const line of hunk.lines) out.push(PREFIX[line.kind] + line.text);
  }
  return out.join("\n") + "\n";
}

/** Both versions of the file whole, when `hunks` (read with `context` unchanged lines around each change) cover
 *  it from its first line to its last; null when they leave some of it out. */
export function wholeVersions(hunks: readonly DiffHunk[], context: number): { old: string; new: string } | null {
  if (hunks.length !== 1) return null;
  const [hunk] = hunks;
  if (hunk.oldStart > 1 || hunk.newStart > 1) return null;
  let trailing = 0;
  for (const line of hunk.lines) trailing = line.kind === "CONTEXT" ? trailing + 1 : 0;
  if (trailing >= context) return null; // the file may go on past what was read
  const oldLines = hunk.lines.filter((l) => l.kind !== "ADD").map((l) => l.text);
  const newLines = hunk.lines.filter((l) => l.kind !== "DELETE").map((l) => l.text);
  const text = (lines: string[]) => (lines.length ? lines.join("\n") + "\n" : "");
  return { old: text(oldLines), new: text(newLines) };
}

/** The line numbers a file's hunks show, per side: a thread on any other line has nowhere to sit in the diff. */
export function shownLines(hunks: readonly DiffHunk[]): { OLD: Set<number>; NEW: Set<number> } {
  const shown = { OLD: new Set<number>(), NEW: new Set<number>() };
  for (const hunk of hunks)
    for (const line of hunk.lines) {
      if (line.oldNumber != null) shown.OLD.add(line.oldNumber);
      if (line.newNumber != null) shown.NEW.add(line.newNumber);
    }
  return shown;
}
