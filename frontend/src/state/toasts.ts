// Short-lived notices for request failures and confirmations, announced to screen readers.
import { createStore } from "./store";

export interface Toast {
  id: number;
  text: string;
  tone: "error" | "info";
}

export const toasts = createStore<{ items: Toast[] }>({ items: [] });
let next = 1;

export function toast(text: string, tone: Toast["tone"] = "error"): void {
  const id = next++;
  toasts.set((s) => ({ items: [...s.items.slice(-3), { id, text, tone }] }));
  setTimeout(() => dismiss(id), tone === "error" ? 8000 : 4000);
}

export function dismiss(id: number): void {
  toasts.set((s) => ({ items: s.items.filter((t) => t.id !== id) }));
}
