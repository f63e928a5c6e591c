/**
 * The email a send writes: subject, plain text and HTML naming each proof, its revision and
 * its items. Pure: the store gives it the proofs as they are sent.
 */
import type { Proof } from "@printshop/shared/contracts/proofs";

export interface ComposedMail {
  subject: string;
  text: string;
  html: string;
}

/** Until the approval page exists the customer answers by email; this says so. */
export const REPLY_SENTENCE = "Reply to this email with any changes, or to approve.";

const titleOf = (proof: Proof): string => proof.title ?? "Proof";

const escapeHtml = (value: string): string =>
  value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");

const sizesText = (sizes: readonly { size: string; quantity: number }[]): string =>
  sizes.length === 0 ? "no sizes given" : sizes.map((s) => `${s.size} × ${s.quantity}`).join(", ");

export function subjectFor(proofs: readonly Proof[]): string {
  if (proofs.length === 1) {
    const proof = proofs[0]!;
    return `Proof for your approval: ${titleOf(proof)} (revision ${proof.revision.number})`;
  }
  return `${proofs.length} proofs for your approval: ` +
    proofs.map((p) => `${titleOf(p)} (revision ${p.revision.number})`).join(", ");
}

/** The message for `proofs`, with the shop's note when given. */
export function composeMail(
  proofs: readonly Proof[],
  recipientName: string | null,
  note: string | undefined,
): ComposedMail {
  const greeting = recipientName ? `Hello ${recipientName},` : "Hello,";
  const intro = proofs.length === 1
    ? "Please review the proof below."
    : `Please review the ${proofs.length} proofs below.`;
  const text: string[] = [greeting, ""];
  if (note) text.push(note, "");
  text.push(intro, "");
  const html: string[] = [
    `<!doctype html><html><body style="font-family:sans-serif">`,
    `<p>${escapeHtml(greeting)}</p>`,
  ];
  if (note) html.push(`<p>${escapeHtml(note).replace(/\n/g, "<br>")}</p>`);
  html.push(`<p>${escapeHtml(intro)}</p>`);
  proofs.forEach((proof, i) => {
    const heading = `${i + 1}. ${titleOf(proof)}, revision ${proof.revision.number}`;
    text.push(heading, `   Proof ${proof.id}`);
    html.push(
      `<h2>${escapeHtml(heading)}</h2>`,
      `<p style="color:#555">Proof ${escapeHtml(proof.id)}</p>`,
    );
    if (proof.revision.notes) {
      text.push(`   Notes: ${proof.revision.notes}`);
      html.push(`<p>${escapeHtml(proof.revision.notes)}</p>`);
    }
    if (proof.revision.imageUrls.length > 0) {
      text.push("   Images:", ...proof.revision.imageUrls.map((u) => `   - ${u}`));
      html.push(
        "<ul>",
        ...proof.revision.imageUrls.map((u) =>
          `<li><a href="${escapeHtml(u)}">${escapeHtml(u)}</a></li>`
        ),
        "</ul>",
      );
    }
    if (proof.items.length > 0) {
      text.push(
        "   Items:",
        ...proof.items.map((item) => `   - ${item.description}: ${sizesText(item.sizes)}`),
      );
      html.push(
        "<table><tr><th align=left>Item</th><th align=left>Sizes</th></tr>",
        ...proof.items.map((item) =>
          `<tr><td>${escapeHtml(item.description)}</td><td>${
            escapeHtml(sizesText(item.sizes))
          }</td></tr>`
        ),
        "</table>",
      );
    }
    text.push("");
  });
  text.push(REPLY_SENTENCE, "");
  html.push(`<p>${escapeHtml(REPLY_SENTENCE)}</p>`, "</body></html>");
  return { subject: subjectFor(proofs), text: text.join("\n"), html: html.join("\n") };
}
