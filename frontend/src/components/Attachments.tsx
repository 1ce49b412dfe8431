// Attaching files to a prompt (paste, drag-and-drop, a file picker) and showing them: image thumbnails and
// file chips, in the composer while they upload and in the transcript once sent.
import { useCallback, useEffect, useRef, useState } from "react";
import { errorText } from "../api/graphql";
import { FileGlyph } from "./Icons";
import { attachmentObjectUrl, humanSize, IMAGE_TYPES, MAX_ATTACHMENTS, uploadAttachment, type Uploaded } from "../api/attachments";

interface Pending {
  key: string;
  name: string;
  size: number;
  type: string;
  preview: string | null;
  uploaded: Uploaded | null;
  error: string | null;
}

let counter = 0;

/** The files of one prompt being written: each uploads as soon as it is added. */
export function useAttachments() {
  const [items, setItems] = useState<Pending[]>([]);
  const add = useCallback((files: Iterable<File>) => {
    const list = [...files];
    setItems((current) => {
      const room = Math.max(0, MAX_ATTACHMENTS - current.length);
      const taken = list.slice(0, room).map((file) => {
        const key = `a${++counter}`;
        const preview = IMAGE_TYPES.has(file.type) ? URL.createObjectURL(file) : null;
        void uploadAttachment(file).then(
          (uploaded) => setItems((all) => all.map((i) => (i.key === key ? { ...i, uploaded } : i))),
          (error) => setItems((all) => all.map((i) => (i.key === key ? { ...i, error: errorText(error) } : i))),
        );
        return { key, name: file.name || "pasted", size: file.size, type: file.type, preview, uploaded: null, error: null };
      });
      const refused = list.length - taken.length;
      const note: Pending[] = refused
        ? [{ key: `a${++counter}`, name: `${refused} more`, size: 0, type: "", preview: null, uploaded: null, error: `At most ${MAX_ATTACHMENTS} files go with one message.` }]
        : [];
      return [...current, ...taken, ...note];
    });
  }, []);
  const remove = (key: string) => setItems((all) => all.filter((i) => i.key !== key));
  const clear = () => setItems([]);
  const uploading = items.some((i) => !i.uploaded && !i.error);
  const ids = items.flatMap((i) => (i.uploaded ? [i.uploaded.id] : []));
  const failed = items.some((i) => i.error);
  return { items, add, remove, clear, uploading, ids, failed };
}

export type AttachmentsState = ReturnType<typeof useAttachments>;

/** Paste and drop handlers for a text box (files only; text pastes as usual). */
export function attachmentHandlers(state: AttachmentsState) {
  return {
    onPaste: (e: React.ClipboardEvent) => {
      const files = [...e.clipboardData.files];
      if (files.length) {
        e.preventDefault();
        state.add(files);
      }
    },
    onDragOver: (e: React.DragEvent) => {
      if (e.dataTransfer.types.includes("Files")) e.preventDefault();
    },
    onDrop: (e: React.DragEvent) => {
      if (e.dataTransfer.files.length) {
        e.preventDefault();
        state.add(e.dataTransfer.files);
      }
    },
  };
}

export function AttachmentPicker({ state, disabled }: { state: AttachmentsState; disabled?: boolean }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        onChange={(e) => {
          if (e.target.files) state.add(e.target.files);
          e.target.value = "";
        }}
        data-testid="attach-input"
      />
      <button type="button" className="btn" disabled={disabled} onClick={() => input.current?.click()} data-testid="attach-files" title="Attach files (or paste or drop them)">
        Attach
      </button>
    </>
  );
}

export function PendingAttachments({ state }: { state: AttachmentsState }) {
  if (!state.items.length) return null;
  return (
    <ul className="attachments attachments-pending" aria-label="Attached files" data-testid="pending-attachments">
      {state.items.map((item) => (
        <li key={item.key} className={`attachment-chip${item.error ? " attachment-error" : ""}`} data-testid="pending-attachment">
          {item.preview ? <img className="attachment-thumb" src={item.preview} alt="" /> : <FileGlyph />}
          <span className="attachment-name">{item.name}</span>
          <span className="muted small">{item.error ?? (item.uploaded ? humanSize(item.size) : "uploading…")}</span>
          <button type="button" className="btn-icon" aria-label={`Remove ${item.name}`} onClick={() => state.remove(item.key)}>
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}

export interface SentAttachment {
  id: string;
  name: string;
  size: number;
  contentType: string;
  url: string;
}

function useObjectUrl(url: string, wanted: boolean): string | null {
  const [objectUrl, setObjectUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!wanted) return;
    let live = true;
    attachmentObjectUrl(url).then((u) => live && setObjectUrl(u), () => live && setObjectUrl(null));
    return () => {
      live = false;
    };
  }, [url, wanted]);
  return objectUrl;
}

function SentAttachmentItem({ attachment }: { attachment: SentAttachment }) {
  const image = IMAGE_TYPES.has(attachment.contentType);
  // Images load for their thumbnail; other files only when asked for.
  const objectUrl = useObjectUrl(attachment.url, image);
  const label = `${attachment.name} (${humanSize(attachment.size)})`;
  if (image) {
    return (
      <li className="attachment-image" data-testid="attachment-thumbnail">
        <a href={objectUrl ?? undefined} target="_blank" rel="noreferrer noopener" title={label}>
          {objectUrl ? <img className="attachment-thumb-large" src={objectUrl} alt={attachment.name} /> : <span className="attachment-thumb-large" />}
        </a>
      </li>
    );
  }
  return (
    <li className="attachment-chip" data-testid="attachment-file">
      <FileGlyph />
      <a
        href={attachment.url}
        className="attachment-name"
        onClick={(e) => {
          e.preventDefault();
          void attachmentObjectUrl(attachment.url).then((u) => {
            const link = document.createElement("a");
            link.href = u;
            link.download = attachment.name;
            link.click();
          });
        }}
      >
        {attachment.name}
      </a>
      <span className="muted small">{humanSize(attachment.size)}</span>
    </li>
  );
}

export function SentAttachments({ attachments }: { attachments: readonly SentAttachment[] }) {
  if (!attachments.length) return null;
  return (
    <ul className="attachments" aria-label="Attachments" data-testid="message-attachments">
      {attachments.map((a) => (
        <SentAttachmentItem key={a.id} attachment={a} />
      ))}
    </ul>
  );
}
