/**
 * The approval page's HTML, pure: a proof revision with its images and items and a form to
 * approve it or ask for changes; the decision once made; and a plain page for each reason a link
 * no longer opens. Server-rendered, no script, readable at phone width; the one style sheet is
 * inline and allowed by its hash in the Content-Security-Policy (PAGE_HEADERS), which allows
 * nothing else but https images and posting the form back here.
 */
import { createHash } from "node:crypto";
import {
  APPROVAL_LINK_DAYS,
  DECISION_COMMENT_MAX,
  DECISION_WORDING,
  type ProofHistoryEntry,
  SIGNER_NAME_MAX,
} from "@printshop/shared/contracts/proofs";
import { type Html, html, trusted } from "@printshop/shared/html";
import type { ApprovalPageData, LinkState } from "./approval_link.ts";

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f4f5f7}
main{max-width:42rem;margin:0 auto;padding:1rem;background:#fff;min-height:100vh}
header p{margin:0;color:#57606a;font-size:.9rem}
h1{font-size:1.4rem;margin:.25rem 0 1rem}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
figure{margin:0 0 1rem}
img{display:block;width:100%;height:auto;border:1px solid #d0d7de;border-radius:4px;background:#f6f8fa;min-height:3rem}
figcaption{font-size:.85rem;color:#57606a}
table{width:100%;border-collapse:collapse;margin:.5rem 0}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #d0d7de;vertical-align:top}
td.n,th.n{text-align:right}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],textarea{width:100%;font:inherit;padding:.5rem;border:1px solid #8c959f;border-radius:4px}
textarea{min-height:6rem}
fieldset{border:0;padding:0;margin:1rem 0 0}
legend{font-weight:600;padding:0}
label.choice{display:block;font-weight:400;border:1px solid #d0d7de;border-radius:6px;padding:.75rem;margin:.5rem 0;cursor:pointer}
label.choice span{display:block;margin-top:.35rem;font-size:.9rem;color:#424a53}
input[type=radio]{width:1.1rem;height:1.1rem;vertical-align:-.15rem}
button{font:inherit;font-weight:600;width:100%;padding:.75rem;margin-top:.75rem;border:0;border-radius:6px;color:#fff;background:#1a7f37;cursor:pointer}
.notice{padding:.75rem;border-radius:6px;background:#fff8c5;border:1px solid #d4a72c}
.error{color:#cf222e;font-weight:600}
.done{padding:.75rem;border-radius:6px;background:#dafbe1;border:1px solid #4ac26b}
footer{margin-top:2rem;font-size:.8rem;color:#57606a}
`.trim();

const STYLE_HASH = createHash("sha256").update(STYLE).digest("base64");

/**
 * The page's response headers. No script at all; images from https hosts only (the shop's
 * artwork lives on its own file hosts); the form posts back to this origin only; no framing
 * (clickjacking a decision); a referrer for this origin only (the link's token is in the URL
 * and must not travel to an image host; `no-referrer` would also make the browser send
 * `Origin: null` with the form, which the gateway's cross-site check must refuse); never cached
 * (a decision changes what the page says).
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": [
    "default-src 'none'",
    "img-src https:",
    `style-src 'sha256-${STYLE_HASH}'`,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; "),
  "referrer-policy": "same-origin",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

function layout(title: string, shopName: string | null, body: Html): string {
  return html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex">
        <title>${title}</title>
        <style>${trusted(STYLE)}</style>
      </head>
      <body>
        <main>
    <header>${shopName ? html`<p>${shopName}</p>` : null}</header>
    ${body}
        </main>
      </body>
    </html>
  `.toString();
}

const dateText = (iso: string | Date): string =>
  new Date(iso).toLocaleString("en-GB", {
    day: "numeric",
    month: "long",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    timeZone: "UTC",
    timeZoneName: "short",
  });

function content(data: ApprovalPageData): Html {
  const { proof, shown } = data;
  const title = shown.title ?? "Proof";
  const images = shown.images.map((url, i) =>
    html`<figure><img src="${url}" alt="Artwork, image ${i + 1} of ${shown.images.length}">
<figcaption>Image ${i + 1} of ${shown.images.length}</figcaption></figure>`
  );
  const items = shown.items.map((item) => {
    const total = item.sizes.reduce((sum, s) => sum + s.quantity, 0);
    return html`
      <tr>
        <td>${item.description}</td>
        <td>${item.sizes.length === 0
          ? "—"
          : item.sizes.map((s, i) =>
            html`${i > 0 ? ", " : ""}${s.size}&nbsp;×&nbsp;${s.quantity}`
          )}</td>
        <td class="n">${total}</td>
      </tr>
    `;
  });
  return html`<h1>${title} <small>(revision ${proof.revision.number})</small></h1>
${shown.notes ? html`<p>${shown.notes}</p>` : null}
${images.length > 0 ? html`<h2>Artwork</h2>${images}` : html`<p>This revision has no images.</p>`}
${
    items.length > 0
      ? html`<h2>Items and sizes</h2>
<table><tr><th>Item</th><th>Sizes</th><th class="n">Total</th></tr>${items}</table>`
      : null
  }`;
}

/** What the form remembers of a post it refuses, and why it refused it. */
export interface FormState {
  signerName?: string;
  comment?: string;
  decision?: string;
  /** Field name → message. */
  errors?: Readonly<Record<string, string>>;
  /** Said above the form (the proof changed since it was shown, say). */
  notice?: string;
}

/** The revision with the decision form. `formToken` ties a post to this browser's cookie. */
export function renderApprovalForm(
  data: ApprovalPageData,
  formToken: string,
  state: FormState = {},
): string {
  const error = (field: string): Html | null =>
    state.errors?.[field] ? html`<p class="error">${state.errors[field]}</p>` : null;
  const form = html`<h2>Decide</h2>
${state.notice ? html`<p class="notice">${state.notice}</p>` : null}
<form method="post">
<input type="hidden" name="form" value="${formToken}">
<input type="hidden" name="digest" value="${data.digest}">
<label for="signerName">Your name</label>
<input type="text" id="signerName" name="signerName" required maxlength="${SIGNER_NAME_MAX}" autocomplete="name" value="${
    state.signerName ?? ""
  }">
${error("signerName")}
<label for="comment">Comment <small>(required to request changes)</small></label>
<textarea id="comment" name="comment" maxlength="${DECISION_COMMENT_MAX}">${
    state.comment ?? ""
  }</textarea>
${error("comment")}
<fieldset><legend>Your decision</legend>
<label class="choice"><input type="radio" name="decision" value="approve" required${
    state.decision === "approve"
      ? html`
        checked
      `
      : null
  }> <strong>Approve this proof</strong><span>${DECISION_WORDING.approve}</span></label>
<label class="choice"><input type="radio" name="decision" value="request_changes"${
    state.decision === "request_changes"
      ? html`
        checked
      `
      : null
  }> <strong>Request changes</strong><span>${DECISION_WORDING.request_changes}</span></label>
</fieldset>
${error("decision")}
<button type="submit">Send my decision</button>
</form>
<footer>Sent to ${data.sentTo}. This link works until ${
    dateText(data.expiresAt)
  }. Your decision is recorded with your name, the time, your IP address and browser, and a fingerprint of exactly what this page shows.</footer>`;
  return layout(
    `Proof for approval: ${data.proof.title ?? "Proof"}`,
    data.shopName,
    html`${content(data)}${form}`,
  );
}

const DECISION_DONE: Readonly<Record<string, string>> = {
  approve: "approved",
  request_changes: "requested changes to",
};

/** The revision once it is no longer waiting for a decision: the decision, or the status. */
export function renderDecided(data: ApprovalPageData): string {
  const entry: ProofHistoryEntry | null = data.decision;
  const record = entry?.decision;
  const summary = record
    ? html`<p class="done">${record.signerName} ${DECISION_DONE[record.decision]} revision ${
      entry!.revision
    } on ${dateText(entry!.occurredAt)}.${
      record.comment
        ? html`
          Comment: “${record.comment}”
        `
        : null
    }</p>
<p>${data.shopName} has been told. Thank you.</p>`
    : html`<p class="done">This proof is ${
      data.proof.status.replace("_", " ")
    }; there is nothing to decide here now.</p>`;
  return layout(
    `Proof ${data.proof.title ?? ""}`,
    data.shopName,
    html`${summary}${content(data)}`,
  );
}

/** Why a link does not open, as the customer is told it, and the HTTP status it answers. */
export const LINK_PROBLEMS: Readonly<
  Record<Exclude<LinkState, "open"> | "forged" | "stale_form", {
    status: 404 | 410 | 403;
    title: string;
    text: (shopName: string | null) => string;
  }>
> = {
  forged: {
    status: 404,
    title: "This link is not valid",
    text: () =>
      "The address may have been cut short or changed on its way to you. Open the link from " +
      "your email again, or ask the shop that sent it for a new one.",
  },
  unknown: {
    status: 404,
    title: "This link is not valid",
    text: (shop) =>
      `There is no proof at this address. Ask ${shop ?? "the shop that sent it"} for a new link.`,
  },
  expired: {
    status: 410,
    title: "This link has expired",
    text: (shop) =>
      `Approval links work for ${APPROVAL_LINK_DAYS} days. Ask ${
        shop ?? "the shop"
      } to send the proof again.`,
  },
  withdrawn: {
    status: 410,
    title: "This proof was withdrawn",
    text: (shop) => `${shop ?? "The shop"} withdrew this proof; nothing is waiting for you here.`,
  },
  superseded: {
    status: 410,
    title: "There is a newer version of this proof",
    text: (shop) =>
      `${
        shop ?? "The shop"
      } made changes and sent, or will send, a newer revision. Use the link in the newest email.`,
  },
  stale_form: {
    status: 403,
    title: "Please open the link again",
    text: () =>
      "The form could not be checked (it is from another browser, or cookies are turned " +
      "off for this site). Open the link from your email again and decide from there.",
  },
};

export function renderLinkProblem(
  problem: keyof typeof LINK_PROBLEMS,
  shopName: string | null,
): string {
  const { title, text } = LINK_PROBLEMS[problem];
  return layout(
    title,
    shopName,
    html`
      <h1>${title}</h1>
      <p>${text(shopName)}</p>
    `,
  );
}
