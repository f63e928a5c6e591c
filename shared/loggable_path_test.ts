import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { Hono } from "hono";
import { loggablePath, requestContext } from "./service_defaults.ts";
import { createLogger } from "./log.ts";

const TOKEN = "AaIP6IB2xkk3Gbh3ePSbDmNqJ7x5z3xv4JEgAZOxoKG";

Deno.test("loggablePath: a token is masked wherever it sits; ids and short words stay", () => {
  const cases: [string, string][] = [
    [`/approve/${TOKEN}`, "/approve/[token]"],
    [`/internal/approve/${TOKEN}`, "/internal/approve/[token]"],
    // What a mail client or a careless paste adds around a link.
    [`/approve/${TOKEN}.`, "/approve/[token]."],
    [`/approve/${TOKEN};a=b`, "/approve/[token];a=b"],
    [`/approve%2F${TOKEN}`, "/approve%[token]"],
    [`/approve/${TOKEN}%20`, "/approve/[token]%20"],
    [
      "/v1/quotes/0193b1a0-3e4f-7a50-8b61-7c8d9eafb0c1/groups",
      "/v1/quotes/0193b1a0-3e4f-7a50-8b61-7c8d9eafb0c1/groups",
    ],
    ["/v1/customers/bulk/tier", "/v1/customers/bulk/tier"],
  ];
  for (const [path, logged] of cases) assertEquals(loggablePath(path), logged);
});

Deno.test("the access line: one per request at info, with the token stripped; none at warn", async () => {
  const token = "A".repeat(48);
  for (const level of ["info", "warn"] as const) {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level, write: (line) => lines.push(JSON.parse(line)) });
    const app = new Hono();
    app.use("*", requestContext("test", logger));
    app.get("/p/:token", (c) => c.text("ok"));
    const res = await app.request(`/p/${token}`, { headers: { "x-request-id": "rid-1" } });
    assertEquals([res.status, res.headers.get("x-request-id")], [200, "rid-1"]);
    assertEquals(
      lines.map((l) => [l.msg, l.path, l.status, l.requestId]),
      level === "info" ? [["request", "/p/[token]", 200, "rid-1"]] : [],
    );
    assertEquals(logger.enabled("info"), level === "info");
    assertEquals(logger.child({ a: 1 }).enabled("warn"), true);
  }
});
