import assert from "node:assert/strict";
import type { Hono } from "hono";
import type { z } from "zod";
import { createApp as createQuotesApp } from "@printshop/quotes/app";
import { ConfigSchema as QuotesConfig } from "@printshop/quotes/config";
import { createApp as createCatalogueApp } from "@printshop/catalogue/app";
import { ConfigSchema as CatalogueConfig } from "@printshop/catalogue/config";
import { createApp as createCrmApp } from "@printshop/crm/app";
import { ConfigSchema as CrmConfig } from "@printshop/crm/config";
import { createApp as createProofsApp } from "@printshop/proofs/app";
import { ConfigSchema as ProofsConfig } from "@printshop/proofs/config";
import { createApp as createWebhooksApp } from "@printshop/webhooks/app";
import { ConfigSchema as WebhooksConfig } from "@printshop/webhooks/config";
import { loadConfig } from "./config.ts";
import { connect } from "./db/mod.ts";
import {
  importContextKey,
  INTERNAL_CONTEXT_HEADER,
  signInternalContext,
} from "./internal_context.ts";
import { createLogger } from "./log.ts";
import { ALL_SCOPES } from "./scopes.ts";
import type { ServiceDeps } from "./service_main.ts";
import { serviceDefaults, type ServiceEnv } from "./service_defaults.ts";
import {
  type RouteDef,
  ROUTES,
  routesOf,
  RouteTable,
  type ServiceName,
  SERVICES,
  toHonoPath,
} from "./routes.ts";

const QUOTE_ID = "0190b1c2-3d4e-7f00-8a00-0000000000aa";

Deno.test("RouteTable.match() finds the operation and its decoded parameters", async (t) => {
  const table = new RouteTable();

  await t.step("a literal path", () => {
    assert.equal(table.match("GET", "/v1/quotes")?.route.operationId, "listQuotes");
    assert.equal(table.match("POST", "/v1/quotes")?.route.operationId, "createQuote");
    assert.deepEqual(table.match("GET", "/v1/me")?.params, {});
  });

  await t.step("a literal segment beats a parameter: /v1/quotes/facets is not a quote id", () => {
    const match = table.match("GET", "/v1/quotes/facets");
    assert.equal(match?.route.operationId, "getQuoteFacets");
    assert.deepEqual(match?.params, {});
  });

  await t.step("the literal wins whatever the order of the table", () => {
    const reversed = new RouteTable([...ROUTES].reverse());
    assert.equal(reversed.match("GET", "/v1/quotes/facets")?.route.operationId, "getQuoteFacets");
    assert.equal(reversed.match("GET", `/v1/quotes/${QUOTE_ID}`)?.route.operationId, "getQuote");
  });

  await t.step("parameters are named after the template and decoded", () => {
    const match = table.match("GET", `/v1/quotes/${QUOTE_ID}`);
    assert.equal(match?.route.operationId, "getQuote");
    assert.deepEqual(match?.params, { quoteId: QUOTE_ID });
    assert.deepEqual(table.match("POST", "/v1/quotes/a%20b%2Fc/groups")?.params, {
      quoteId: "a b/c",
    });
    assert.equal(
      table.match("POST", `/v1/quotes/${QUOTE_ID}/groups`)?.route.operationId,
      "createQuoteGroup",
    );
  });

  await t.step("a method the path does not have gives null", () => {
    assert.equal(table.match("DELETE", "/v1/quotes"), null);
    assert.equal(table.match("PUT", `/v1/quotes/${QUOTE_ID}`), null);
    assert.equal(table.match("POST", "/v1/me"), null);
  });

  await t.step("unknown, longer, shorter and trailing-slash paths give null", () => {
    assert.equal(table.match("GET", "/v1/nothing"), null);
    assert.equal(table.match("GET", "/v1"), null);
    assert.equal(table.match("GET", `/v1/quotes/${QUOTE_ID}/groups/extra`), null);
    assert.equal(table.match("GET", "/v1/quotes/"), null, "an empty id is not an id");
    assert.equal(table.match("POST", "/v1/quotes//groups"), null);
  });

  await t.step("malformed percent-encoding gives null instead of throwing", () => {
    assert.equal(table.match("GET", "/v1/quotes/%E0%A4%A"), null);
    assert.equal(table.match("GET", "/v1/quotes/%"), null);
    assert.equal(table.match("POST", "/v1/quotes/%zz/groups"), null);
  });
});

Deno.test("toHonoPath() turns {name} into :name", () => {
  assert.equal(toHonoPath("/v1/quotes"), "/v1/quotes");
  assert.equal(toHonoPath("/v1/quotes/{quoteId}"), "/v1/quotes/:quoteId");
  assert.equal(
    toHonoPath("/v1/quotes/{quoteId}/groups/{groupId}"),
    "/v1/quotes/:quoteId/groups/:groupId",
  );
});

Deno.test("the route table follows its own conventions", async (t) => {
  await t.step("every path starts with /v1/", () => {
    for (const route of ROUTES) assert.match(route.path, /^\/v1\//, route.operationId);
  });

  await t.step("every {param} is a camelCase name ending in Id", () => {
    for (const route of ROUTES) {
      for (const [, name] of route.path.matchAll(/\{([^}]*)\}/g)) {
        assert.match(name!, /^[a-z][A-Za-z0-9]*Id$/, `${route.operationId}: {${name}}`);
      }
      assert.doesNotMatch(route.path.replace(/\{[a-z][A-Za-z0-9]*\}/g, ""), /[{}:]/);
    }
  });

  await t.step("operationIds are unique", () => {
    const ids = ROUTES.map((r) => r.operationId);
    assert.deepEqual(ids.filter((id, i) => ids.indexOf(id) !== i), []);
  });

  await t.step("method + path pairs are unique, also once parameters are renamed", () => {
    const keys = ROUTES.map((r) => `${r.method} ${r.path.replace(/\{[^}]*\}/g, "{}")}`);
    assert.deepEqual(keys.filter((k, i) => keys.indexOf(k) !== i), []);
  });

  await t.step("every row's owner is the gateway or a known service", () => {
    for (const route of ROUTES) {
      assert.ok(
        route.service === "gateway" || (SERVICES as readonly string[]).includes(route.service),
        `${route.operationId} is owned by "${route.service}"`,
      );
    }
  });

  await t.step("every row's scope is a known scope", () => {
    for (const route of ROUTES) {
      if (route.scope !== null) {
        assert.ok((ALL_SCOPES as readonly string[]).includes(route.scope), route.operationId);
      }
    }
  });

  await t.step("every row matches itself in the RouteTable", () => {
    const table = new RouteTable();
    for (const route of ROUTES) {
      const concrete = route.path.replace(/\{[^}]*\}/g, QUOTE_ID);
      assert.equal(table.match(route.method, concrete)?.route, route, route.operationId);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// The contract between the table and the services.

type AnyDeps = ServiceDeps<never>;

interface ServiceUnderTest {
  name: ServiceName;
  schema: z.ZodObject;
  build: (deps: AnyDeps) => Hono<ServiceEnv>;
}

const SERVICE_APPS: ServiceUnderTest[] = [
  {
    name: "quotes",
    schema: QuotesConfig,
    build: createQuotesApp as (d: AnyDeps) => Hono<ServiceEnv>,
  },
  {
    name: "catalogue",
    schema: CatalogueConfig,
    build: createCatalogueApp as (d: AnyDeps) => Hono<ServiceEnv>,
  },
  { name: "crm", schema: CrmConfig, build: createCrmApp as (d: AnyDeps) => Hono<ServiceEnv> },
  {
    name: "proofs",
    schema: ProofsConfig,
    build: createProofsApp as (d: AnyDeps) => Hono<ServiceEnv>,
  },
  {
    name: "webhooks",
    schema: WebhooksConfig,
    build: createWebhooksApp as (d: AnyDeps) => Hono<ServiceEnv>,
  },
];

const NOWHERE = "postgres://nobody@127.0.0.1:1/none";
const SECRET = "x".repeat(32);

/** Counts `METHOD path` entries of an app's registered routes. */
function routeCounts(app: Hono<ServiceEnv>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { method, path } of app.routes) {
    const key = `${method} ${path}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/**
 * The business handlers an app adds under /v1 on top of what `serviceDefaults` registers by
 * itself (middleware and /healthz). Returned as `METHOD path` → how many handlers were registered there.
 */
function businessHandlers(
  app: Hono<ServiceEnv>,
  defaults: Hono<ServiceEnv>,
): Map<string, number> {
  const all = routeCounts(app);
  const fromDefaults = routeCounts(defaults);
  const handlers = new Map<string, number>();
  for (const [key, count] of all) {
    const [method, path] = key.split(" ") as [string, string];
    if (method === "ALL" || path.endsWith("*") || !path.startsWith("/v1/")) continue;
    const extra = count - (fromDefaults.get(key) ?? 0);
    if (extra > 0) handlers.set(key, extra);
  }
  return handlers;
}

const rowKey = (route: RouteDef): string => `${route.method} ${toHonoPath(route.path)}`;

Deno.test("every service serves exactly its rows of the route table", async (t) => {
  const sql = connect(NOWHERE, { schema: "x" });
  const logger = createLogger({ level: "error" });
  const contextKey = await importContextKey(SECRET);
  try {
    for (const service of SERVICE_APPS) {
      await t.step(service.name, () => {
        const config = loadConfig(service.schema, {
          DATABASE_URL: NOWHERE,
          MIGRATION_DATABASE_URL: NOWHERE,
          INTERNAL_SECRET: SECRET,
          WEBHOOK_SECRETS_KEY: SECRET,
        }) as never;
        const app = service.build({ config, sql, logger, contextKey });
        const defaults = serviceDefaults({ service: service.name, logger, contextKey });
        const handlers = businessHandlers(app, defaults);

        const served = [...handlers.keys()].sort();
        const rows = routesOf(service.name).map(rowKey).sort();
        assert.deepEqual(
          served,
          rows,
          `${service.name}: handlers without a row: ${
            JSON.stringify(served.filter((k) => !rows.includes(k)))
          }; rows without a handler: ${JSON.stringify(rows.filter((k) => !served.includes(k)))}`,
        );
        for (const [key, count] of handlers) {
          assert.equal(
            count,
            1,
            `${service.name}: ${key} has ${count} handlers; one shadows another`,
          );
        }
      });
    }
  } finally {
    await sql.end();
  }
});

Deno.test("the quotes service sends /v1/quotes/facets to the facets handler, not getQuote", async () => {
  // The table says a literal beats a parameter; the service's router must agree. An unknown
  // query parameter tells the two handlers apart without a database: the facets handler refuses
  // it by name, the getQuote handler would refuse "facets" as a quote id first.
  const sql = connect(NOWHERE, { schema: "x" });
  const logger = createLogger({ level: "error" });
  const contextKey = await importContextKey(SECRET);
  try {
    const config = loadConfig(QuotesConfig, {
      DATABASE_URL: NOWHERE,
      MIGRATION_DATABASE_URL: NOWHERE,
      INTERNAL_SECRET: SECRET,
    });
    const app = createQuotesApp({ config, sql, logger, contextKey });
    const path = "/v1/quotes/facets";
    const header = await signInternalContext(contextKey, "GET", `${path}?bogus=1`, {
      organizationId: QUOTE_ID,
      credentialKind: "tenant_key",
      credentialId: QUOTE_ID,
      scopes: ["quotes.read"],
      requestId: "routes-test",
      issuedAt: Date.now(),
    });
    const response = await app.request(`${path}?bogus=1`, {
      headers: { [INTERNAL_CONTEXT_HEADER]: header },
    });
    const body = await response.json();
    assert.equal(response.status, 400);
    assert.equal(body.error, "validation_error");
    assert.deepEqual(body.details?.map((d: { path: string }) => d.path), ["bogus"]);
  } finally {
    await sql.end();
  }
});

Deno.test("the gateway's own rows are exactly getMe and getLimits", () => {
  // gateway/app.ts answers them from a map typed by the gateway's contract, so a row without a
  // handler there (or a handler without a row) does not compile.
  const owned = routesOf("gateway").map((r) => r.operationId).sort();
  assert.deepEqual(owned, ["getLimits", "getMe"]);
});

Deno.test("RouteTable.methodsAt() lists the methods a concrete path takes, in a fixed order", () => {
  const table = new RouteTable();
  assert.deepEqual(table.methodsAt("/v1/quotes"), ["GET", "POST"]);
  assert.deepEqual(table.methodsAt(`/v1/quotes/${QUOTE_ID}`), ["GET", "PATCH", "DELETE"]);
  assert.deepEqual(table.methodsAt("/v1/quotes/facets"), ["GET"]);
  assert.deepEqual(table.methodsAt("/v1/nothing"), []);
});
