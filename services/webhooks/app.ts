import type { Hono } from "hono";
import { createServiceApp, type ServiceEnv } from "@printshop/shared/service-defaults";
import type { ServiceDeps } from "@printshop/shared/service-main";
import type { Config } from "./config.ts";
import { createSecretBox, type SecretBox } from "./delivery/secret_box.ts";
import type { DispatchDeps } from "./dispatch.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import { eventRoutes } from "./routes/events.ts";

/** What the routes and the background worker share: one secret box, one way to deliver. */
export function dispatchDepsOf(deps: ServiceDeps<Config>): () => Promise<DispatchDeps> {
  let box: Promise<SecretBox> | undefined;
  let dispatch: Promise<DispatchDeps> | undefined;
  const { config } = deps;
  return () =>
    dispatch ??= (box ??= createSecretBox(config.WEBHOOK_SECRETS_KEY)).then((secretBox) => ({
      sql: deps.sql,
      box: secretBox,
      logger: deps.logger,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      retrySchedule: config.WEBHOOK_RETRY_SCHEDULE,
    }));
}

export function createApp(deps: ServiceDeps<Config>): Hono<ServiceEnv> {
  const app = createServiceApp({
    service: "webhooks",
    logger: deps.logger,
    contextKey: deps.contextKey,
    ready: async () => {
      await deps.sql`SELECT 1`;
    },
  });
  const dispatch = dispatchDepsOf(deps);
  const pageSizeMax = deps.config.PAGE_SIZE_MAX;
  app.route(
    "/",
    webhookRoutes({
      sql: deps.sql,
      box: async () => (await dispatch()).box,
      dispatch,
      allowPrivateTargets: deps.config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      pageSizeMax,
    }),
  );
  app.route("/", eventRoutes({ sql: deps.sql, pageSizeMax }));
  return app;
}
