/**
 * The email a send writes: subject, plain text and HTML naming each proof, its revision, its
 * items and its approval link. Pure: the store gives it the proofs as they are sent and the
 * links it made for them.
 */
import type { Proof } from "@printshop/shared/contracts/proofs";
import { type Html, html } from "@printshop/shared/html";

export interface ComposedMail {
  subject: string;
  text: string;
  html: string;
}

/** The links of a send: one URL per proof, in the proofs' order, and when they expire. */
export interface MailLinks {
  shopName: string;
  urls: readonly string[];
  expiresAt: Date;
}

const titleOf = (proof: Proof): string => proof.title ?? "Proof";

const sizesText = (sizes: readonly { size: string; quantity: number }[]): string =>
  sizes.length === 0 ? "no sizes given" : sizes.map((s) => `${s.size} × ${s.quantity}`).join(", ");

/** A date as a customer reads it in the message, unambiguous in any locale. */
const dayText = (date: Date): string =>
  date.toLocaleDateString("en-GB", { day: "numeric", month: "long", year: "numeric" });

export function subjectFor(proofs: readonly Proof[], shopName: string): string {
  if (proofs.length === 1) {
    const proof = proofs[0]!;
    return `${shopName}: proof for your approval: ${
      titleOf(proof)
    } (revision ${proof.revision.number})`;
  }
  return `${shopName}: ${proofs.length} proofs for your approval: ` +
    proofs.map((p) => `${titleOf(p)} (revision ${p.revision.number})`).join(", ");
}

/** The message for `proofs`, with the shop's note when given and each proof's link. */
export function composeMail(
  proofs: readonly Proof[],
  recipientName: string | null,
  note: string | undefined,
  links: MailLinks,
): ComposedMail {
  const greeting = recipientName ? `Hello ${recipientName},` : "Hello,";
  const intro = proofs.length === 1
    ? `${links.shopName} sent you a proof to review.`
    : `${links.shopName} sent you ${proofs.length} proofs to review.`;
  const closing = `Open each link to see the proof and approve it or ask for changes. The ` +
    `links work until ${dayText(links.expiresAt)}; only you should use them.`;

  const text: string[] = [greeting, ""];
  if (note) text.push(note, "");
  text.push(intro, "");
  proofs.forEach((proof, i) => {
    text.push(`${i + 1}. ${titleOf(proof)}, revision ${proof.revision.number}`);
    if (proof.revision.notes) text.push(`   Notes: ${proof.revision.notes}`);
    if (proof.items.length > 0) {
      text.push(
        "   Items:",
        ...proof.items.map((item) => `   - ${item.description}: ${sizesText(item.sizes)}`),
      );
    }
    text.push(`   Review and approve: ${links.urls[i]}`, "");
  });
  text.push(closing, "");

  const sections: Html[] = proofs.map((proof, i) =>
    html`<h2>${i + 1}. ${titleOf(proof)}, revision ${proof.revision.number}</h2>
${proof.revision.notes ? html`<p>${proof.revision.notes}</p>` : null}
${
      proof.items.length > 0
        ? html`<table><tr><th align=left>Item</th><th align=left>Sizes</th></tr>
${
          proof.items.map((item) =>
            html`
              <tr>
                <td>${item.description}</td>
                <td>${sizesText(item.sizes)}</td>
              </tr>
            `
          )
        }</table>`
        : null
    }
<p><a href="${
      links.urls[i]
    }" style="display:inline-block;padding:10px 16px;background:#1f5fbf;color:#fff;text-decoration:none;border-radius:4px">Review and approve</a></p>`
  );
  const body = html`
    <!doctype html>
    <html>
      <body style="font-family:sans-serif">
    <p>${greeting}</p>
    ${note
      ? html`<p>${note.split("\n").map((line, i) => i === 0 ? line : html`<br>${line}`)}</p>`
      : null}
    <p>${intro}</p>
    ${sections}
    <p>${closing}</p>
      </body>
    </html>
  `;
  return {
    subject: subjectFor(proofs, links.shopName),
    text: text.join("\n"),
    html: body.toString(),
  };
}
