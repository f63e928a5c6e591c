/**
 * createServiceApp() against a contract of its own: what a handler can rely on before it runs
 * (scope, path ids, query, body, cost fields), how its reply is sent, and the contract checks
 * (responses, event payloads, the events an operation declares). The type-level promises (a
 * missing or extra handler, a wrong reply) are checked by `deno check` at the end of the file.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { z } from "zod";
import {
  Deleted,
  NonNegativeIntParam,
  operations,
  serviceContract,
  Text,
  Uuid,
} from "./contracts/mod.ts";
import { serviceBaseConfig } from "./config.ts";
import { ALL_SCOPES } from "./scopes.ts";
import { writeEvent } from "./outbox.ts";
import { transaction } from "./db/mod.ts";
import { createServiceApp, type Handlers, jsonStream, jsonText } from "./service_app.ts";
import type { ServiceDeps } from "./service_main.ts";
import { type Envelope, serviceHarness } from "./testing/mod.ts";

const Thing = z.object({ id: Uuid, name: z.string(), buyPrice: z.number().optional() });

const thingOperations = operations("Things", {
  listThings: {
    method: "GET",
    path: "/v1/things",
    scope: null,
    summary: "List",
    query: z.strictObject({ limit: NonNegativeIntParam.optional() }),
    responses: { 200: z.array(Thing) },
  },
  getThing: {
    method: "GET",
    path: "/v1/things/{thingId}",
    scope: "quotes.read",
    summary: "Get",
    responses: { 200: Thing },
  },
  createThing: {
    method: "POST",
    path: "/v1/things",
    scope: "quotes.write",
    summary: "Create",
    body: z.strictObject({ name: Text(20), buyPrice: z.number().optional() }),
    responses: { 201: Thing, 200: Thing },
    events: ["quote.deleted"],
  },
  deleteThing: {
    method: "DELETE",
    path: "/v1/things/{thingId}",
    scope: "quotes.write",
    summary: "Delete",
    responses: { 200: Deleted },
  },
  streamThings: {
    method: "GET",
    path: "/v1/thing-stream",
    scope: null,
    summary: "Streamed",
    query: z.strictObject({
      failAfter: NonNegativeIntParam.optional(),
      wrong: z.enum(["shape"]).optional(),
    }),
    responses: { 200: z.array(Thing) },
  },
  brokenThing: {
    method: "GET",
    path: "/v1/broken-things/{thingId}",
    scope: null,
    summary: "Answers what its declaration does not say",
    responses: { 200: Thing },
  },
});

const contract = serviceContract("things", thingOperations);

/** What each handler saw, so a test can tell whether it ran and with what. */
const seen: unknown[] = [];

function handlers(deps: ServiceDeps<unknown>): Handlers<typeof thingOperations> {
  return {
    listThings: ({ query }) => {
      seen.push(query);
      return { data: [{ id: crypto.randomUUID(), name: `limit ${query.limit ?? "none"}` }] };
    },
    getThing: ({ params }) => {
      seen.push(params);
      // Sent as it is: JSON text built elsewhere (by the database, say).
      return { data: jsonText(`{"id":"${params.thingId}","name":"raw"}`) };
    },
    createThing: async ({ body, organizationId }) => {
      seen.push(body);
      const id = crypto.randomUUID();
      if (["undeclared", "bad payload", "event"].includes(body.name)) {
        await transaction(deps.sql, async (tx) => {
          if (body.name === "undeclared") {
            await writeEvent(tx, {
              organizationId,
              type: "quote.created",
              aggregateId: id,
              payload: null as never,
            });
          }
          await writeEvent(tx, {
            organizationId,
            type: "quote.deleted",
            aggregateId: id,
            payload: { id: body.name === "bad payload" ? "not-a-uuid" : id },
          });
        });
      }
      return body.name === "again"
        ? { data: { id, name: body.name }, message: "Already there", result: false }
        : { status: 201, data: { id, name: body.name }, message: "Thing created" };
    },
    deleteThing: ({ params }) => ({ data: { id: params.thingId }, message: "Thing deleted" }),
    brokenThing: ({ params }) => ({ data: { id: params.thingId, name: 42 } as never }),
    streamThings: ({ query }) => {
      // Three things in six chunks; with failAfter, the stream errors after that many chunks.
      const name = query.wrong ? "42" : '"streamed"';
      const chunks = ["[", `{"id":"${UUID_A}","name":${name}}`, ",", `{"id":"${UUID_B}",`];
      chunks.push(`"name":${name}},{"id":"${UUID_C}","name":${name}}`, "]");
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === query.failAfter) return controller.error(new Error("the source failed"));
          if (sent === chunks.length) return controller.close();
          controller.enqueue(new TextEncoder().encode(chunks[sent++]));
        },
      });
      return { data: jsonStream(body) };
    },
  };
}

const UUID_A = "0190b1c2-3d4e-7f00-8a00-00000000000a";
const UUID_B = "0190b1c2-3d4e-7f00-8a00-00000000000b";
const UUID_C = "0190b1c2-3d4e-7f00-8a00-00000000000c";

async function harness(contractChecks: boolean) {
  return await serviceHarness({
    service: "things",
    configSchema: z.object(serviceBaseConfig),
    // No tables of its own: the platform track still gives it an outbox.
    migrations: new URL("./no_migrations/", import.meta.url),
    buildApp: (deps) => createServiceApp(contract, deps, handlers(deps), { contractChecks }),
  });
}

async function call(
  h: Awaited<ReturnType<typeof harness>>,
  method: string,
  path: string,
  options: { body?: unknown; scopes?: readonly string[] } = {},
): Promise<{ status: number; body: Envelope; text: string }> {
  const res = await h.request(method, path, options);
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Envelope, text };
}

const UUID = "0190B1C2-3D4E-7F00-8A00-0000000000AA";

Deno.test("createServiceApp() validates path, query and body before the handler runs", async (t) => {
  await using h = await harness(false);

  await t.step("a path id is a UUID, lower-cased for the handler", async () => {
    seen.length = 0;
    const bad = await call(h, "GET", "/v1/things/not-a-uuid");
    assertEquals([bad.status, bad.body.error], [400, "validation_error"]);
    assertEquals(bad.body.details, [{ path: "thingId", message: "Must be a UUID" }]);
    assertEquals(seen, [], "the handler did not run");
    const ok = await call(h, "GET", `/v1/things/${UUID}`);
    assertEquals(ok.status, 200);
    assertEquals(seen, [{ thingId: UUID.toLowerCase() }]);
  });

  await t.step("a declared query is parsed; anything undeclared is refused by name", async () => {
    seen.length = 0;
    assertEquals((await call(h, "GET", "/v1/things?limit=5")).status, 200);
    assertEquals(seen, [{ limit: 5 }]);
    const bad = await call(h, "GET", "/v1/things?limit=5&colour=red");
    assertEquals(bad.body.details, [{ path: "colour", message: 'Unknown field "colour"' }]);
    // An operation that declares no query refuses every parameter, writes included.
    const del = await call(h, "DELETE", `/v1/things/${UUID}?force=1`);
    assertEquals([del.status, del.body.details?.[0]?.path], [400, "force"]);
    assertEquals(seen.length, 1, "no handler ran for a refused query");
  });

  await t.step(
    "a body is validated; an operation without one takes only nothing or {}",
    async () => {
      seen.length = 0;
      const bad = await call(h, "POST", "/v1/things", { body: { name: "" } });
      assertEquals([bad.status, bad.body.details?.[0]?.path], [400, "name"]);
      const extra = await call(h, "DELETE", `/v1/things/${UUID}`, { body: { cascade: true } });
      assertEquals(extra.body.details, [{ path: "cascade", message: 'Unknown field "cascade"' }]);
      assertEquals(seen, []);
      for (const body of [undefined, {}]) {
        assertEquals((await call(h, "DELETE", `/v1/things/${UUID}`, { body })).status, 200);
      }
    },
  );

  await t.step("the scope is checked first: without it nothing else is looked at", async () => {
    const res = await call(h, "GET", "/v1/things/not-a-uuid", { scopes: ["quotes.write"] });
    assertEquals([res.status, res.body.error], [403, "insufficient_scope"]);
    assert.match(res.body.message, /"quotes\.read"/);
  });

  await t.step("setting a cost field needs costs.read", async () => {
    seen.length = 0;
    const scopes = ALL_SCOPES.filter((s) => s !== "costs.read");
    const res = await call(h, "POST", "/v1/things", { body: { name: "x", buyPrice: 1 }, scopes });
    assertEquals([res.status, res.body.error], [403, "insufficient_scope"]);
    assertEquals(seen, []);
  });
});

Deno.test("createServiceApp() sends a reply in the envelope, JSON text as it is", async () => {
  await using h = await harness(false);
  const created = await call(h, "POST", "/v1/things", { body: { name: "new" } });
  assertEquals(created.status, 201);
  assertEquals([created.body.status, created.body.message], [true, "Thing created"]);
  const again = await call(h, "POST", "/v1/things", { body: { name: "again" } });
  // 200 by default; the envelope's status is the operation's own outcome.
  assertEquals([again.status, again.body.status, again.body.message], [
    200,
    false,
    "Already there",
  ]);
  const raw = await call(h, "GET", `/v1/things/${UUID}`);
  assertEquals(
    raw.text,
    `{"status":true,"message":"OK","data":{"id":"${UUID.toLowerCase()}","name":"raw"}}`,
  );
  const unknown = await call(h, "GET", "/v1/nothing-here");
  assertEquals([unknown.status, unknown.body.error], [404, "route_not_found"]);
});

Deno.test("createServiceApp() streams a JsonStream in the envelope, and cuts it short if it fails", async () => {
  const things = [UUID_A, UUID_B, UUID_C].map((id) => `{"id":"${id}","name":"streamed"}`);
  const whole = `{"status":true,"message":"OK","data":[${things.join(",")}]}`;
  for (const checks of [false, true]) {
    await using h = await harness(checks);
    const res = await h.request("GET", "/v1/thing-stream");
    assertEquals([res.status, res.headers.get("content-type")], [200, "application/json"]);
    assertEquals(await res.text(), whole, `checks ${checks}: the chunks, in order, enveloped`);

    // A stream that fails after the status was sent can only end the answer early: reading it
    // fails, so no client takes a part for the whole.
    const failing = await h.request("GET", "/v1/thing-stream?failAfter=3");
    if (checks) {
      // A checked stream is read out before anything is sent: its failure is a plain 500.
      assertEquals(failing.status, 500);
      assertEquals(((await failing.json()) as Envelope).error, "internal_error");
    } else {
      assertEquals(failing.status, 200);
      await assert.rejects(failing.text());
    }
  }
  // With checks on, the streamed JSON is held to the declaration like any other answer.
  await using checked = await harness(true);
  const wrong = await call(checked, "GET", "/v1/thing-stream?wrong=shape");
  assertEquals([wrong.status, wrong.body.error], [500, "internal_error"]);
});

Deno.test("createServiceApp() with contract checks refuses an answer its declaration does not describe", async () => {
  {
    await using h = await harness(false);
    assertEquals((await call(h, "GET", `/v1/broken-things/${UUID}`)).status, 200);
  }
  await using h = await harness(true);
  const res = await call(h, "GET", `/v1/broken-things/${UUID}`);
  assertEquals([res.status, res.body.error], [500, "internal_error"]);
});

Deno.test("writeEvent() in a checked operation needs the event declared and its payload valid", async () => {
  await using h = await harness(true);
  const count = async (): Promise<number> =>
    (await h.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox`)[0]!.n;

  const undeclared = await call(h, "POST", "/v1/things", { body: { name: "undeclared" } });
  assertEquals([undeclared.status, undeclared.body.error], [500, "internal_error"]);
  const invalid = await call(h, "POST", "/v1/things", { body: { name: "bad payload" } });
  assertEquals([invalid.status, invalid.body.error], [500, "internal_error"]);
  assertEquals(await count(), 0, "both transactions rolled back");
  const fine = await call(h, "POST", "/v1/things", { body: { name: "event" } });
  assertEquals(fine.status, 201);
  assertEquals(await count(), 1, "a declared event with a valid payload is written");
});

// ---------------------------------------------------------------------------------------------
// Types: each line marked @ts-expect-error must fail to compile (deno check fails otherwise).

export function typeChecks(deps: ServiceDeps<unknown>): void {
  const all = handlers(deps);
  const { brokenThing: _omitted, ...missingOne } = all;
  // @ts-expect-error a declared operation without a handler
  createServiceApp(contract, deps, missingOne);
  // @ts-expect-error a handler for an operation the contract does not declare
  createServiceApp(contract, deps, { ...all, ...({ extraThing: () => ({ data: 1 }) }) });
  const wrong: Handlers<typeof thingOperations> = {
    ...all,
    // @ts-expect-error a status the operation does not declare
    deleteThing: ({ params }) => ({ status: 201, data: { id: params.thingId } }),
  };
  const wrongData: Handlers<typeof thingOperations> = {
    ...all,
    // @ts-expect-error data of the wrong shape
    getThing: () => ({ data: { id: 1 } }),
  };
  const wrongBody: Handlers<typeof thingOperations> = {
    ...all,
    createThing: ({ body }) => {
      // @ts-expect-error the body is typed by its schema: name is a string
      const name: number = body.name;
      return { status: 201, data: { id: "x", name: String(name) } };
    },
  };
  const wrongParam: Handlers<typeof thingOperations> = {
    ...all,
    // @ts-expect-error a path parameter the path does not have
    getThing: ({ params }) => ({ data: { id: params.itemId, name: "x" } }),
  };
  void [wrong, wrongData, wrongBody, wrongParam];
}
