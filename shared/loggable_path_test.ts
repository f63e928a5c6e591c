import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { loggablePath } from "./service_defaults.ts";

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
