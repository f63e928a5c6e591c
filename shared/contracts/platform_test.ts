import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import type { Operation } from "./operation.ts";
import { EVENTS, gatewayContract, SERVICE_CONTRACTS } from "./platform.ts";

/** What may write events: each operation, and each public page, with the events it declares. */
const contracts = [gatewayContract, ...SERVICE_CONTRACTS].map((c) => ({
  service: c.service,
  operations: [
    ...(Object.values(c.operations) as Operation[]),
    ...Object.entries(c.pages).map(([name, page]) => ({ operationId: name, events: page.events })),
  ],
}));

Deno.test("every event is named by its own key, once", () => {
  for (const [key, definition] of Object.entries(EVENTS)) assertEquals(definition.type, key);
});

Deno.test("an operation declares only events of its own service's topic", () => {
  for (const contract of contracts) {
    for (const operation of contract.operations) {
      for (const type of operation.events ?? []) {
        assertEquals(
          EVENTS[type].service,
          contract.service,
          `${operation.operationId} declares ${type}, which ${EVENTS[type].service} publishes`,
        );
      }
    }
  }
});

Deno.test("every public event is declared by an operation or a page that may write it", () => {
  const declared = new Set(
    contracts.flatMap((c) => c.operations.flatMap((o) => o.events ?? [])),
  );
  const public_ = Object.values(EVENTS).filter((d) => d.readScope !== null);
  assert(public_.length > 20);
  assertEquals(public_.filter((d) => !declared.has(d.type)).map((d) => d.type), []);
});

Deno.test("operationIds are unique across the platform", () => {
  const ids = contracts.flatMap((c) => c.operations.map((o) => o.operationId));
  assertEquals(ids.filter((id, i) => ids.indexOf(id) !== i), []);
});

Deno.test("an operation's tag is declared, with its description, by its own service's contract", () => {
  const undeclared = [gatewayContract, ...SERVICE_CONTRACTS].flatMap((contract) =>
    (Object.values(contract.operations) as Operation[])
      .filter((operation) => contract.tags[operation.tag] === undefined)
      .map((operation) =>
        `${operation.operationId} is listed under "${operation.tag}", which ${contract.service} ` +
        "does not declare in its contract's tags"
      )
  );
  assertEquals(undeclared, []);
});

Deno.test("a service declares only tags its operations use, and no other service declares them", () => {
  const owners = new Map<string, string>();
  const problems: string[] = [];
  for (const contract of [gatewayContract, ...SERVICE_CONTRACTS]) {
    const used = new Set((Object.values(contract.operations) as Operation[]).map((o) => o.tag));
    for (const tag of Object.keys(contract.tags)) {
      if (!used.has(tag)) {
        problems.push(`${contract.service} declares "${tag}", which no operation uses`);
      }
      const owner = owners.get(tag);
      if (owner) problems.push(`"${tag}" is declared by both ${owner} and ${contract.service}`);
      owners.set(tag, contract.service);
    }
  }
  assertEquals(problems, []);
});
