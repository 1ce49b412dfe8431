// Whether a CSS media query matches now, following changes (a keyboard attached, a window resized).
import { useSyncExternalStore } from "react";

export function useMedia(query: string): boolean {
  return useSyncExternalStore(
    (onChange) => {
      const list = window.matchMedia(query);
      list.addEventListener("change", onChange);
      return () => list.removeEventListener("change", onChange);
    },
    () => window.matchMedia(query).matches,
  );
}

/** A device with a precise pointer or hover, where a keyboard is likely: keyboard hints make sense there. */
export function useHasKeyboard(): boolean {
  return useMedia("(pointer: fine), (hover: hover)");
}
