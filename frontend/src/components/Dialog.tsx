// A modal built on <dialog>: focus stays inside, Escape closes, focus returns to the opener.
import { useEffect, useRef } from "react";

export function Dialog(props: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: React.ReactNode;
  testId?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) {
      opener.current = document.activeElement as HTMLElement | null;
      dialog.showModal();
    } else if (!props.open && dialog.open) {
      dialog.close();
      opener.current?.focus?.();
    }
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={`${props.testId ?? "dialog"}-title`}
      data-testid={props.testId}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
      onClick={(e) => {
        if (e.target === ref.current) props.onClose(); // backdrop click
      }}
    >
      {props.open && (
        <div className="dialog-body">
          <h2 id={`${props.testId ?? "dialog"}-title`}>{props.title}</h2>
          {props.children}
        </div>
      )}
    </dialog>
  );
}
