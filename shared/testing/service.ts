import type { Hono } from "hono";
import { openDatabase, type Sql } from "../db/mod.ts";
import { createLogger, type Logger } from "../log.ts";
import {
  type ContextKey,
  importContextKey,
  INTERNAL_CONTEXT_HEADER,
  type InternalContext,
  signInternalContext,
} from "../internal_context.ts";
import { ALL_SCOPES } from "../scopes.ts";
import type { ServiceDeps } from "../service_main.ts";
import { type ServiceEnv, targetOf } from "../service_defaults.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";

/**
 * A service app on a fresh, migrated database, called in-process through `app.request` with a
 * properly signed internal context — for tests beside a service's code.
 */
export interface ServiceHarness<C> {
  app: Hono<ServiceEnv>;
  sql: Sql;
  /** The test database, for code under test that opens its own pool (the embedded bus). */
  databaseUrl: string;
  deps: ServiceDeps<C>;
  contextKey: ContextKey;
  request(
    method: string,
    path: string,
    options?: {
      body?: unknown;
      organizationId?: string;
      scopes?: readonly string[];
      /** Fixed when a test needs one credential across requests (it owns webhooks, say). */
      credentialId?: string;
    },
  ): Promise<Response>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function serviceHarness<C>(options: {
  service: string;
  migrations: URL;
  config: C;
  buildApp: (deps: ServiceDeps<C>) => Hono<ServiceEnv>;
  logger?: Logger;
  onQuery?: (text: string) => void;
}): Promise<ServiceHarness<C>> {
  const db: TestDatabase = await createTestDatabase();
  const logger = options.logger ?? createLogger({ level: "error" });
  const sql = await openDatabase(db.url, options.service, options.migrations, logger, {
    ...(options.onQuery ? { onQuery: options.onQuery } : {}),
  });
  const contextKey = await importContextKey("test-internal-secret-of-at-least-32-chars");
  const deps: ServiceDeps<C> = { config: options.config, sql, logger, contextKey };
  const app = options.buildApp(deps);
  const defaultOrg = crypto.randomUUID();
  const close = async (): Promise<void> => {
    await sql.end();
    await db.drop();
  };
  return {
    app,
    sql,
    databaseUrl: db.url,
    deps,
    contextKey,
    async request(method, path, opts = {}) {
      const context: InternalContext = {
        organizationId: opts.organizationId ?? defaultOrg,
        credentialKind: "tenant_key",
        credentialId: opts.credentialId ?? crypto.randomUUID(),
        scopes: [...(opts.scopes ?? ALL_SCOPES)],
        requestId: crypto.randomUUID(),
        issuedAt: Date.now(),
      };
      const target = targetOf(new URL(path, "http://service.test").href);
      const headers = new Headers({
        [INTERNAL_CONTEXT_HEADER]: await signInternalContext(contextKey, method, target, context),
      });
      let body: string | undefined;
      if (opts.body !== undefined) {
        headers.set("content-type", "application/json");
        body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
      }
      return await app.request(path, { method, headers, body });
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
