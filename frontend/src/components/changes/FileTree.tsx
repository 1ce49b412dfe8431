// The changed files as a tree (folders with a single folder inside shown as one "a/b/c" row), each file with
// its status letter, +/− and a reviewed checkbox. `treeOrder` is the order j/k walk.
import type { FileChange, FileStatus, RepositoryChanges } from "../../api/changesOps";
import type { FileRef } from "../../hooks/useChanges";
import { t, tn } from "../../i18n";
import { Counts } from "./Counts";

interface Folder {
  name: string;
  folders: Folder[];
  files: FileChange[];
}

const LETTER: Record<FileStatus, string> = {
  ADDED: "A",
  MODIFIED: "M",
  DELETED: "D",
  RENAMED: "R",
  COPIED: "C",
  TYPE_CHANGED: "T",
  UNMERGED: "U",
};

const STATUS_KEY = {
  ADDED: "fileAdded",
  MODIFIED: "fileModified",
  DELETED: "fileDeleted",
  RENAMED: "fileRenamed",
  COPIED: "fileCopied",
  TYPE_CHANGED: "fileTypeChanged",
  UNMERGED: "fileUnmerged",
} as const;

export function statusName(status: FileStatus): string {
  return t(STATUS_KEY[status]);
}

function build(files: readonly FileChange[]): Folder {
  const root: Folder = { name: "", folders: [], files: [] };
  for (const file of files) {
    const parts = file.path.split("/");
    let folder = root;
    for (const part of parts.slice(0, -1)) {
      let next = folder.folders.find((f) => f.name === part);
      if (!next) {
        next = { name: part, folders: [], files: [] };
        folder.folders.push(next);
      }
      folder = next;
    }
    folder.files.push(file);
  }
  const compact = (folder: Folder): Folder => {
    let current = { ...folder, folders: folder.folders.map(compact) };
    while (current.files.length === 0 && current.folders.length === 1 && current.name) {
      const [only] = current.folders;
      current = { ...only, name: `${current.name}/${only.name}` };
    }
    return current;
  };
  const sort = (folder: Folder): Folder => ({
    ...folder,
    folders: folder.folders.map(sort).sort((a, b) => a.name.localeCompare(b.name)),
    files: [...folder.files].sort((a, b) => a.path.localeCompare(b.path)),
  });
  return sort(compact(root));
}

function walk(folder: Folder, out: FileChange[]): FileChange[] {
  for (const sub of folder.folders) walk(sub, out);
  out.push(...folder.files);
  return out;
}

/** Every file in the order the tree shows them, repository by repository. */
export function treeOrder(repositories: readonly RepositoryChanges[], files: Record<string, FileChange[]>): FileRef[] {
  return repositories.flatMap((r) => walk(build(files[r.repositoryId] ?? []), []).map((f) => ({ repositoryId: r.repositoryId, path: f.path })));
}

interface TreeProps {
  repositories: readonly RepositoryChanges[];
  files: Record<string, FileChange[]>;
  selected: FileRef | null;
  threadCounts: Record<string, number>;
  onSelect: (ref: FileRef) => void;
  onReviewed: (ref: FileRef, file: FileChange, reviewed: boolean) => void;
  onMore: (repositoryId: string) => void;
}

export function FileTree(props: TreeProps) {
  const many = props.repositories.length > 1;
  return (
    <nav className="file-tree" aria-label={t("changedFiles")} data-testid="file-tree">
      {props.repositories.map((r) => {
        const files = props.files[r.repositoryId] ?? [];
        const tree = <FolderView folder={build(files)} repositoryId={r.repositoryId} depth={0} {...props} />;
        return (
          <section key={r.repositoryId} className="file-tree-repo" data-testid="file-tree-repo">
            {many && (
              <h3 className="file-tree-repo-name">
                {r.name} <Counts additions={r.stats.additions} deletions={r.stats.deletions} />
              </h3>
            )}
            {r.note && <p className="muted small">{r.note}</p>}
            {tree}
            {r.files.pageInfo.hasNextPage && (
              <button type="button" className="btn btn-small" onClick={() => props.onMore(r.repositoryId)}>
                {t("moreFiles", { n: r.files.totalCount - files.length })}
              </button>
            )}
          </section>
        );
      })}
    </nav>
  );
}

function FolderView(props: TreeProps & { folder: Folder; repositoryId: string; depth: number }) {
  const { folder, repositoryId, selected } = props;
  return (
    <ul className="file-tree-list">
      {folder.folders.map((sub) => (
        <li key={sub.name} className="file-tree-folder">
          <span className="file-tree-folder-name">{sub.name}/</span>
          <FolderView {...props} folder={sub} depth={props.depth + 1} />
        </li>
      ))}
      {folder.files.map((file) => {
        const ref = { repositoryId, path: file.path };
        const current = selected?.repositoryId === repositoryId && selected.path === file.path;
        const name = file.path.slice(file.path.lastIndexOf("/") + 1);
        const threads = props.threadCounts[`${repositoryId}\u0000${file.path}`] ?? 0;
        return (
          <li
            key={file.path}
            className={`file-row${current ? " is-current" : ""}`}
            data-testid="file-row"
            data-path={file.path}
            data-status={file.status}
            data-reviewed={file.reviewed ? "true" : "false"}
          >
            <input
              type="checkbox"
              checked={file.reviewed}
              onChange={(e) => props.onReviewed(ref, file, e.target.checked)}
              aria-label={t("markReviewed", { path: file.path })}
              data-testid="file-reviewed"
            />
            <span className={`file-status file-status-${file.status.toLowerCase()}`} title={statusName(file.status)} aria-hidden="true">
              {LETTER[file.status]}
            </span>
            <button
              type="button"
              className="file-name"
              onClick={() => props.onSelect(ref)}
              aria-current={current ? "true" : undefined}
              title={file.oldPath ? `${file.oldPath} → ${file.path}` : file.path}
            >
              <span className="sr-only">{statusName(file.status)}: </span>
              {name}
            </button>
            {threads > 0 && (
              <span className="file-threads" aria-label={tn("reviewCommentCount", threads)}>
                {threads}
              </span>
            )}
            <Counts additions={file.additions} deletions={file.deletions} />
          </li>
        );
      })}
    </ul>
  );
}
