import { Hono } from "hono";
import {
  CreateWebhookBody,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  NoQuery,
  UpdateWebhookBody,
  WEBHOOK_URL_MAX,
} from "@printshop/shared/contracts";
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
  updateSubscriptionUrl,
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

/**
 * The URL as it will be requested: canonical spelling, no fragment (never sent anyway). Checked
 * for reach (SSRF guard) and, once percent-encoded, for length again.
 */
async function checkedTarget(url: string, allowPrivateTargets: boolean): Promise<string> {
  const problem = await checkTargetUrl(url, allowPrivateTargets);
  if (problem) throw validationError("url", problem);
  const parsed = new URL(url);
  parsed.hash = "";
  if (parsed.href.length > WEBHOOK_URL_MAX) {
    throw validationError(
      "url",
      `Must be at most ${WEBHOOK_URL_MAX} characters once percent-encoded (${parsed.href.length})`,
    );
  }
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
    const query = readQuery(c, ListWebhooksQuery);
    const limit = Math.min(query.limit ?? deps.pageSizeMax, deps.pageSizeMax);
    return ok(c, await listSubscriptions(sql, ownerOf(c), query, limit));
  });

  app.post("/v1/webhooks", async (c) => {
    readQuery(c, NoQuery);
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
    const result = await subscribe(sql, await deps.box(), ownerOf(c), {
      event: input.event,
      // The normalised form, so the same target spelled differently is the same subscription.
      url: await checkedTarget(input.url, deps.allowPrivateTargets),
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

  app.patch("/v1/webhooks/:webhookId", async (c) => {
    const id = readUuidParam(c, "webhookId");
    readQuery(c, NoQuery);
    const input = await readBody(c, UpdateWebhookBody);
    const url = await checkedTarget(input.url, deps.allowPrivateTargets);
    const result = await updateSubscriptionUrl(sql, ownerOf(c), id, url);
    if (result.outcome === "not_found") throw notFound("Webhook", id);
    if (result.outcome === "duplicate") {
      throw conflict(
        `Webhook "${result.existingId}" already sends this event to that URL; delete one of the two`,
      );
    }
    return ok(c, result.subscription, {
      message: "URL changed; the secret and delivery history stay, queued deliveries follow",
    });
  });

  app.delete("/v1/webhooks/:webhookId", async (c) => {
    const id = readUuidParam(c, "webhookId");
    readQuery(c, NoQuery);
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
    readUuidParam(c, "webhookId");
    const query = readQuery(c, ListDeliveriesQuery);
    const subscription = await requireSubscription(c);
    const limit = Math.min(query.limit ?? deps.pageSizeMax, deps.pageSizeMax);
    return ok(c, await listDeliveries(sql, subscription.id, query, limit));
  });

  app.post("/v1/webhooks/:webhookId/deliveries/:deliveryId/retry", async (c) => {
    readUuidParam(c, "webhookId");
    const deliveryId = readUuidParam(c, "deliveryId");
    readQuery(c, NoQuery);
    const subscription = await requireSubscription(c);
    const dispatch = await deps.dispatch();
    const claim = await claimFailedDelivery(
      sql,
      subscription.id,
      deliveryId,
      leaseMs(dispatch.timeoutMs),
    );
    if (claim.outcome === "not_found") throw notFound("Delivery", deliveryId);
    if (claim.outcome === "inactive") {
      throw conflict(`Delivery "${deliveryId}" cannot be replayed: ${claim.reason}`);
    }
    if (claim.outcome === "not_failed") {
      throw conflict(
        `Delivery "${deliveryId}" is ${claim.status}; only a failed delivery can be replayed`,
      );
    }
    await deliverOnce(dispatch, claim.delivery, "manual");
    const delivery = await findDelivery(sql, subscription.id, deliveryId);
    const delivered = delivery?.status === "succeeded";
    // The envelope's status is the replay's own outcome (spec 2.1): false when it failed again.
    return ok(c, delivery, {
      message: delivered ? "Delivered" : "Replayed; the endpoint failed again",
      result: delivered,
    });
  });

  return app;
}
