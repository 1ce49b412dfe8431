// A settings page refetches its list when another tab (or anyone) changes that part of the workspace's
// configuration, and after a reconnect, when anything may have changed unseen.
import { useEffect, useRef } from "react";
import type { WorkspaceEventKind } from "../gql/graphql";
import { onConfigChange } from "../state/app";

export function useConfigChange(kinds: WorkspaceEventKind[], reload: () => unknown): void {
  const latest = useRef(reload);
  latest.current = reload;
  const key = kinds.join(",");
  useEffect(
    () =>
      onConfigChange((kind) => {
        if (kind === "SUBSCRIBED" || key.split(",").includes(kind)) void latest.current();
      }),
    [key],
  );
}
