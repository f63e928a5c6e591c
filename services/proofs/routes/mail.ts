import type { Hono } from "hono";
import {
  INTERNAL_MAIL_PATH,
  type mailOperations,
  PLATFORM_MAIL_SCOPE,
} from "@printshop/shared/contracts/proofs";
import { ApiError, ok } from "@printshop/shared/http";
import { INTERNAL_CONTEXT_HEADER, verifyInternalContext } from "@printshop/shared/internal-context";
import type { Handlers } from "@printshop/shared/service-app";
import { type ServiceEnv, targetOf } from "@printshop/shared/service-defaults";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "../config.ts";
import { type Delivery, listOutbox, sendProofs } from "../store/mail.ts";

/** `…/send`: proofs by email, through the outbox (the request never waits on the mail server). */
export function mailRoutes(
  { sql, config }: ServiceDeps<Config>,
): Handlers<typeof mailOperations> {
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
      }),
      message: message(delivery),
    }),
    sendProofs: async ({ body, organizationId, auth }) => ({
      data: await sendProofs(sql, organizationId, body, { caller: auth, delivery, many: true }),
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
    const result = await verifyInternalContext(
      deps.contextKey,
      c.req.method,
      targetOf(c.req.url),
      c.req.header(INTERNAL_CONTEXT_HEADER),
    );
    if (!result.ok || !result.context.scopes.includes(PLATFORM_MAIL_SCOPE)) {
      c.get("log").warn("internal context refused", {
        reason: result.ok ? "scope" : result.reason,
      });
      throw new ApiError("unauthenticated", "Request does not carry a valid internal context");
    }
    return ok(c, await listOutbox(deps.sql, deps.config.PAGE_SIZE_MAX));
  });
}
