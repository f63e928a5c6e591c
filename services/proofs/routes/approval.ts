/**
 * The approval page, as the gateway forwards it (`approvalPages` in the contract): a visitor
 * with no credential, known by the signed context the gateway sends (APPROVAL_PAGE_SCOPE, with
 * the visitor's address and browser). GET shows the link's page, recording a view on its first
 * opening; POST takes the decision from the form, then sends the browser back to the page
 * (303), which shows the decision.
 *
 * A post counts only when it carries the form's token, which matches the nonce of a SameSite
 * cookie set with the page (a signed double submit), and when the browser does not say it comes
 * from another site (Sec-Fetch-Site); the gateway has checked Origin against the host already.
 */
import type { Context, Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { z } from "zod";
import { approvalPages, ClientDecisionBody } from "@printshop/shared/contracts/proofs";
import { CONTRACT_CHECKS, runChecked } from "@printshop/shared/contract-checks";
import { ApiError } from "@printshop/shared/http";
import { toHonoPath } from "@printshop/shared/routes";
import { requireInternalScope, type ServiceEnv } from "@printshop/shared/service-defaults";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { type LinkKey, verifyLinkToken } from "@printshop/shared/link-token";
import {
  approvalLinkKey,
  formToken,
  formTokenMatches,
  newFormNonce,
} from "../domain/approval_token.ts";
import {
  type FormState,
  LINK_PROBLEMS,
  PAGE_HEADERS,
  renderApprovalForm,
  renderDecided,
  renderLinkProblem,
} from "../domain/approval_page.ts";
import { move } from "../domain/status.ts";
import { decideThroughLink, openApprovalLink, type Visitor } from "../store/approval_links.ts";

const PAGE = approvalPages.approvalPage;
/** The cookie holding the form's nonce, sent back only to the page's own paths. */
const FORM_COOKIE = "proof_form";
const COOKIE_PATH = PAGE.path.slice(0, PAGE.path.indexOf("{"));
const FORM_COOKIE_MAX_AGE_S = 24 * 60 * 60;

/** The form's fields: the API's decision fields (one declaration), and what the page showed. */
const PageForm = z.object({
  decision: ClientDecisionBody.shape.decision,
  signerName: ClientDecisionBody.shape.signerName,
  comment: ClientDecisionBody.shape.comment,
  digest: z.string().regex(/^[0-9a-f]{64}$/),
});

/** What the customer is told of a field the form refused, in the page's own words. */
function fieldMessage(field: string, issue: z.core.$ZodIssue): string {
  if (issue.code === "too_big") return issue.message;
  if (field === "signerName") return "Give your name";
  if (field === "decision") return "Choose Approve this proof or Request changes";
  if (field === "comment") return "Say what you would like changed";
  return "The form was not complete; open the link again";
}

/** A form value as text the database can keep: no NUL (a 400 like any other bad value). */
const NUL = "\u0000";

function respond(c: Context, status: number, body: string): Response {
  return c.body(body, status as 200, PAGE_HEADERS);
}

function problem(
  c: Context,
  kind: keyof typeof LINK_PROBLEMS,
  shopName: string | null,
): Response {
  return respond(c, LINK_PROBLEMS[kind].status, renderLinkProblem(kind, shopName));
}

export function addApprovalPage(app: Hono<ServiceEnv>, deps: ServiceDeps<Config>): void {
  const { sql, contextKey } = deps;
  const linkKey: LinkKey = approvalLinkKey(contextKey.secret);

  /** The page for an open link: the form while a decision is awaited, the outcome after. */
  const show = async (
    c: Context,
    linkId: string,
    visitor: Visitor,
    state: FormState = {},
    status = 200,
  ): Promise<Response> => {
    // HEAD reads the page's headers and nothing more: it is no opening by the customer.
    const opened = await openApprovalLink(sql, linkId, visitor, {
      recordView: c.req.method === "GET",
    });
    if (!opened) return problem(c, "unknown", null);
    if (opened.state !== "open") return problem(c, opened.state, opened.shopName);
    const data = opened.page;
    if ("refused" in move("approve", data.proof.status)) {
      return respond(c, status, renderDecided(data));
    }
    // One nonce per browser and link for a day: a reload keeps the form valid.
    let nonce = getCookie(c, FORM_COOKIE);
    if (!nonce || !/^[A-Za-z0-9_-]{22}$/.test(nonce)) nonce = newFormNonce();
    setCookie(c, FORM_COOKIE, nonce, {
      path: COOKIE_PATH,
      httpOnly: true,
      sameSite: "Strict",
      secure: c.get("auth").publicUrl?.startsWith("https:") ?? false,
      maxAge: FORM_COOKIE_MAX_AGE_S,
    });
    return respond(c, status, renderApprovalForm(data, formToken(linkKey, linkId, nonce), state));
  };

  const decide = async (c: Context, linkId: string, visitor: Visitor): Promise<Response> => {
    const fetchSite = c.req.header("sec-fetch-site");
    if (fetchSite !== undefined && fetchSite !== "same-origin" && fetchSite !== "none") {
      return problem(c, "stale_form", null);
    }
    const mediaType = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
    if (mediaType !== "application/x-www-form-urlencoded") {
      return problem(c, "stale_form", null);
    }
    const form = new URLSearchParams(await c.req.text());
    if (!formTokenMatches(linkKey, linkId, getCookie(c, FORM_COOKIE) ?? null, form.get("form"))) {
      return problem(c, "stale_form", null);
    }
    const values = {
      signerName: form.get("signerName") ?? undefined,
      comment: form.get("comment")?.trim() ? form.get("comment")! : undefined,
      decision: form.get("decision") ?? undefined,
    };
    const parsed = PageForm.safeParse({ ...values, digest: form.get("digest") ?? undefined });
    const errors: Record<string, string> = {};
    for (const field of ["signerName", "comment"] as const) {
      if (values[field]?.includes(NUL)) errors[field] = "Must not contain NUL characters";
    }
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const field = String(issue.path[0] ?? "form");
        errors[field] ??= fieldMessage(field, issue);
      }
    }
    if (!parsed.success || Object.keys(errors).length > 0) {
      const shown = { ...values, signerName: values.signerName?.replaceAll(NUL, "") };
      return await show(c, linkId, visitor, { ...shown, errors }, 400);
    }
    try {
      const outcome = await decideThroughLink(sql, linkId, parsed.data, visitor);
      if (outcome.state !== "decided") return problem(c, outcome.state, outcome.shopName);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code === "validation_error") {
        // The API's words are the shop's; the customer reads the page's.
        const errors = Object.fromEntries(
          (error.details ?? []).map((d) => [
            d.path ?? "form",
            d.path === "comment" ? "Say what you would like changed" : d.message,
          ]),
        );
        return await show(c, linkId, visitor, { ...values, errors }, 400);
      }
      if (error.code === "conflict") {
        // Decided meanwhile, superseded, or changed since it was shown: the page as it is now.
        return await show(c, linkId, visitor, { ...values, notice: error.message }, 409);
      }
      throw error;
    }
    // Post/redirect/get: a reload shows the decision instead of posting it again.
    return c.redirect(PAGE.path.replace("{token}", c.req.param("token")!), 303);
  };

  const handle = async (c: Context<ServiceEnv>): Promise<Response> => {
    const context = await requireInternalScope(c, contextKey, PAGE.internalScope);
    c.set("auth", context);
    const visitor: Visitor = {
      address: context.client?.address ?? null,
      userAgent: context.client?.userAgent ?? null,
    };
    const linkId = verifyLinkToken(linkKey, c.req.param("token") ?? "");
    if (linkId === null) return problem(c, "forged", null);
    return c.req.method === "POST"
      ? await decide(c, linkId, visitor)
      : await show(c, linkId, visitor);
  };

  app.on(
    [...PAGE.methods],
    toHonoPath(PAGE.internalPath),
    (c) =>
      CONTRACT_CHECKS
        ? runChecked({ operationId: "approvalPage", events: PAGE.events }, () => handle(c))
        : handle(c),
  );
}
