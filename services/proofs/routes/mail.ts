import type { Hono } from "hono";
import {
  INTERNAL_MAIL_PATH,
  type mailOperations,
  PLATFORM_MAIL_SCOPE,
} from "@printshop/shared/contracts/proofs";
import { ApiError, ok } from "@printshop/shared/http";
import type { InternalContext } from "@printshop/shared/internal-context";
import type { Handlers } from "@printshop/shared/service-app";
import { requireInternalScope, type ServiceEnv } from "@printshop/shared/service-defaults";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { type Delivery, type LinkSettings, listOutbox, sendProofs } from "../store/mail.ts";
import { approvalLinkKey } from "../domain/approval_token.ts";
import { mayAimLinks } from "../domain/deciding_links.ts";

/**
 * The links of a send from the signed context: the gateway names the shop and its own public
 * address on every call (a service cannot know where the gateway is reached from).
 */
function linkSettings(key: LinkSettings["key"], auth: InternalContext): LinkSettings {
  if (!auth.publicUrl || !auth.organizationName) {
    throw new ApiError(
      "internal_error",
      "The gateway did not pass its public URL and the shop's name; approval links need both",
    );
  }
  return {
    key,
    publicUrl: auth.publicUrl,
    shopName: auth.organizationName,
    mayApprove: mayAimLinks(auth.scopes),
  };
}

/** `…/send`: proofs by email, through the outbox (the request never waits on the mail server). */
export function mailRoutes(
  { sql, config, contextKey }: ServiceDeps<Config>,
): Handlers<typeof mailOperations> {
  const key = approvalLinkKey(contextKey.secret);
  const delivery: Delivery = config.SMTP_URL ? "queued" : "local";
  const message = (d: Delivery): string =>
    d === "queued"
      ? "Queued for the mail server"
      : "Kept in the local outbox (no SMTP_URL): read it at GET /admin/mail";
  return {
    sendProof: async ({ params, body, organizationId, auth }) => ({
      data: await sendProofs(sql, organizationId, { ...body, proofIds: [params.proofId] }, {
        caller: auth,
        delivery,
        many: false,
        links: linkSettings(key, auth),
      }),
      message: message(delivery),
    }),
    sendProofs: async ({ body, organizationId, auth }) => ({
      data: await sendProofs(sql, organizationId, body, {
        caller: auth,
        delivery,
        many: true,
        links: linkSettings(key, auth),
      }),
      message: message(delivery),
    }),
  };
}

/**
 * The outbox for the platform operator, read by the gateway's `GET /admin/mail`: every
 * organisation's messages, newest first, at most PAGE_SIZE_MAX. Outside `/v1`, so the gateway
 * never routes a tenant here; the signed internal context must hold PLATFORM_MAIL_SCOPE, which
 * only the gateway's admin API signs.
 */
export function addInternalMailRoute(app: Hono<ServiceEnv>, deps: ServiceDeps<Config>): void {
  app.get(INTERNAL_MAIL_PATH, async (c) => {
    await requireInternalScope(c, deps.contextKey, PLATFORM_MAIL_SCOPE);
    return ok(c, await listOutbox(deps.sql, deps.config.PAGE_SIZE_MAX));
  });
}
