/**
 * Who may aim a deciding link. A send's message carries approval links, and whoever holds one
 * decides the proof on the customer's behalf, as `proofs.approve` does. So only a credential
 * holding `proofs.approve` chooses where links go: it sends anywhere, and the address it sets or
 * confirms as a proof's recipient is the one address a credential without it may send that proof
 * to. A credential holding only `proofs.write` therefore cannot bring a link to a mailbox of its
 * own choosing, and so cannot approve through one. Pure: the store gives it what it locked.
 */

/** The scope whose holder may aim a deciding link (and decide directly). */
export const APPROVE_SCOPE = "proofs.approve";

/** Whether a caller with `scopes` may aim deciding links. */
export function mayAimLinks(scopes: readonly string[]): boolean {
  return scopes.includes(APPROVE_SCOPE);
}

/** A proof as a send checks it: where it is addressed, and the address confirmed for it. */
export interface SendTarget {
  id: string;
  recipientEmail: string;
  /** The recipient a credential holding `proofs.approve` set or confirmed; null: none. */
  confirmedRecipient: string | null;
}

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/**
 * Why a credential without `proofs.approve` may not send `proofs` to `to` (a message for a 403),
 * or null when it may: `to` must be each proof's recipient, as confirmed.
 */
export function sendRefusal(proofs: readonly SendTarget[], to: string): string | null {
  const elsewhere = proofs.find((proof) => !same(proof.recipientEmail, to));
  if (elsewhere) {
    return `Sending to an address other than the proof's recipient needs scope ` +
      `"${APPROVE_SCOPE}": the message carries approval links, and a link decides its proof`;
  }
  const unconfirmed = proofs.find((proof) =>
    proof.confirmedRecipient === null || !same(proof.confirmedRecipient, to)
  );
  if (unconfirmed) {
    return `Proof "${unconfirmed.id}" is addressed to "${unconfirmed.recipientEmail}", which no ` +
      `credential holding "${APPROVE_SCOPE}" has confirmed: the message carries approval links, ` +
      `and a link decides its proof. A credential holding "${APPROVE_SCOPE}" confirms the ` +
      `recipient by setting recipientEmail (PATCH /v1/proofs/${unconfirmed.id}) or by sending ` +
      `the proof`;
  }
  return null;
}

/**
 * The proofs of a send by a credential holding `proofs.approve` whose recipient the send
 * confirms: those it goes to (it chose that address for them).
 */
export function confirmedBySend(proofs: readonly SendTarget[], to: string): string[] {
  return proofs.filter((proof) => same(proof.recipientEmail, to)).map((proof) => proof.id);
}
