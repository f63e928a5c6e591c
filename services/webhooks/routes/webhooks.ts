import { Hono } from "hono";
import { CreateWebhookBody, ListDeliveriesQuery, NoQuery } from "@printshop/shared/contracts";
import {
  ApiError,
  conflict,
  created,
  notFound,
  ok,
  readBody,
  readQuery,
  readUuidParam,
  validationError,
} from "@printshop/shared/http";
import { eventDefinition } from "@printshop/shared/events";
import {
  canSeeCosts,
  type ServiceContext,
  type ServiceEnv,
} from "@printshop/shared/service-defaults";
import type { Sql } from "@printshop/shared/db";
import type { SecretBox } from "../delivery/secret_box.ts";
import { checkTargetUrl } from "../delivery/address_guard.ts";
import {
  findSubscription,
  listSubscriptions,
  type Owner,
  rotateSecret,
  subscribe,
  unsubscribe,
} from "../store/subscriptions.ts";
import { claimFailedDelivery, findDelivery, listDeliveries } from "../store/deliveries.ts";
import { deliverOnce, type DispatchDeps, leaseMs } from "../dispatch.ts";

export interface WebhookRoutesDeps {
  sql: Sql;
  box: () => Promise<SecretBox>;
  dispatch: () => Promise<DispatchDeps>;
  allowPrivateTargets: boolean;
  pageSizeMax: number;
}

/** The URL as it will be requested: canonical spelling, no fragment (never sent anyway). */
function normaliseTarget(url: string): string {
  const parsed = new URL(url);
  parsed.hash = "";
  return parsed.href;
}

/** Subscriptions belong to the calling credential: another credential's answer 404. */
function ownerOf(c: ServiceContext): Owner {
  const auth = c.get("auth");
  return {
    organizationId: auth.organizationId,
    credentialKind: auth.credentialKind,
    credentialId: auth.credentialId,
  };
}

/** `/v1/webhooks`: subscriptions, secret rotation, delivery history and replay. */
export function webhookRoutes(deps: WebhookRoutesDeps): Hono<ServiceEnv> {
  const { sql } = deps;
  const app = new Hono<ServiceEnv>();

  const requireSubscription = async (c: ServiceContext) => {
    const id = readUuidParam(c, "webhookId");
    const subscription = await findSubscription(sql, ownerOf(c), id);
    if (!subscription) throw notFound("Webhook", id);
    return subscription;
  };

  app.get("/v1/webhooks", async (c) => {
    readQuery(c, NoQuery);
    return ok(c, await listSubscriptions(sql, ownerOf(c)));
  });

  app.post("/v1/webhooks", async (c) => {
    const input = await readBody(c, CreateWebhookBody);
    const definition = eventDefinition(input.event);
    if (!definition?.readScope) {
      throw validationError(
        "event",
        `Unknown event "${input.event}"; GET /v1/reference/events lists the names`,
      );
    }
    if (!c.get("auth").scopes.includes(definition.readScope)) {
      throw new ApiError(
        "insufficient_scope",
        `Subscribing to "${input.event}" needs scope "${definition.readScope}"`,
      );
    }
    const problem = await checkTargetUrl(input.url, deps.allowPrivateTargets);
    if (problem) throw validationError("url", problem);
    const result = await subscribe(sql, await deps.box(), ownerOf(c), {
      event: input.event,
      // The normalised form, so the same target spelled differently is the same subscription.
      url: normaliseTarget(input.url),
      includesCosts: canSeeCosts(c),
    });
    return result.created
      ? created(c, result.subscription, "Subscribed; store the secret now, it is not shown again")
      : ok(c, result.subscription, {
        message: "Already subscribed; the secret is not shown again",
      });
  });

  app.get("/v1/webhooks/:webhookId", async (c) => {
    readQuery(c, NoQuery);
    return ok(c, await requireSubscription(c));
  });

  app.delete("/v1/webhooks/:webhookId", async (c) => {
    const id = readUuidParam(c, "webhookId");
    const deleted = await unsubscribe(sql, ownerOf(c), id);
    return ok(c, { id }, {
      message: deleted ? "Unsubscribed" : "No such subscription; nothing to do",
    });
  });

  app.post("/v1/webhooks/:webhookId/rotate-secret", async (c) => {
    const id = readUuidParam(c, "webhookId");
    readQuery(c, NoQuery);
    const rotated = await rotateSecret(sql, await deps.box(), ownerOf(c), id);
    if (!rotated) throw notFound("Webhook", id);
    return ok(c, rotated, {
      message: "Secret rotated; the previous one keeps signing deliveries for 48 hours",
    });
  });

  app.get("/v1/webhooks/:webhookId/deliveries", async (c) => {
    const subscription = await requireSubscription(c);
    const query = readQuery(c, ListDeliveriesQuery);
    return ok(
      c,
      await listDeliveries(sql, subscription.id, {
        limit: Math.min(query.limit ?? deps.pageSizeMax, deps.pageSizeMax),
        offset: query.offset ?? 0,
        status: query.status,
      }),
    );
  });

  app.post("/v1/webhooks/:webhookId/deliveries/:deliveryId/retry", async (c) => {
    const subscription = await requireSubscription(c);
    const deliveryId = readUuidParam(c, "deliveryId");
    readQuery(c, NoQuery);
    const dispatch = await deps.dispatch();
    const claim = await claimFailedDelivery(
      sql,
      subscription.id,
      deliveryId,
      leaseMs(dispatch.timeoutMs),
    );
    if (claim.outcome === "not_found") throw notFound("Delivery", deliveryId);
    if (claim.outcome === "not_failed") {
      throw conflict(
        claim.status === "revoked"
          ? `Delivery "${deliveryId}" cannot be replayed: the subscribing credential is revoked`
          : `Delivery "${deliveryId}" is ${claim.status}; only a failed delivery can be replayed`,
      );
    }
    await deliverOnce(dispatch, claim.delivery, "manual");
    const delivery = await findDelivery(sql, subscription.id, deliveryId);
    return ok(c, delivery, {
      message: delivery?.status === "succeeded"
        ? "Delivered"
        : "Replayed; the endpoint failed again",
    });
  });

  return app;
}
