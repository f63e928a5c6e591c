/**
 * Task rules, as pure functions: when a task or a checklist item is stamped complete, and how a
 * calling credential is named as an author.
 */
import type { CredentialKind } from "@printshop/shared/internal-context";
import type { TaskStatus } from "@printshop/shared/contracts/crm";

/** What a write does to a completion time: stamp it now, clear it, or leave it be. */
export type Completion = "stamp" | "clear" | "keep";

/**
 * A task's `completedAt` after its status goes from `before` (null for a new task) to `after`:
 * stamped when it becomes done, cleared when it leaves done, kept otherwise (so a PATCH that
 * sends `done` again does not move the time it was finished).
 */
export function taskCompletion(before: TaskStatus | null, after: TaskStatus): Completion {
  if (after === "done") return before === "done" ? "keep" : "stamp";
  return before === "done" ? "clear" : "keep";
}

/** A checklist item's `completedAt` when `completed` goes from `before` to `after`. */
export function itemCompletion(before: boolean, after: boolean): Completion {
  if (before === after) return "keep";
  return after ? "stamp" : "clear";
}

const CREDENTIAL_LABELS: Record<CredentialKind, string> = {
  tenant_key: "API key",
  partner: "Partner app",
};

/**
 * The name an author is shown by. A service learns only the credential's kind and id (the
 * gateway keeps key and app names, and no credential has an email), so the name says which
 * credential it was, short enough to read and long enough to tell keys apart.
 */
export function credentialName(kind: CredentialKind, id: string): string {
  return `${CREDENTIAL_LABELS[kind]} ${id.slice(0, 8)}`;
}
