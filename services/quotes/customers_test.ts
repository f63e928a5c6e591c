/**
 * The customer projection: what the CRM's `customer.*` events teach the quotes service, seen as a
 * user sees it (a quote's `clientName`, the quote list's `search`). Events are applied through
 * the consumer's batch handler, as the bus hands them over, and, for catching up after a stop,
 * through the embedded bus itself.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { CUSTOMER_EXAMPLE } from "@printshop/shared/contracts/crm";
import type { BusEvent } from "@printshop/shared/events";
import { createEmbeddedBus } from "@printshop/shared/events/embedded-bus";
import { createLogger, type Logger } from "@printshop/shared/log";
import { waitFor } from "@printshop/shared/net";
import { callAs, okAs, type ServiceHarness, serviceHarness } from "@printshop/shared/testing";
import { quotesService } from "./app.ts";
import type { Config } from "./config.ts";
import {
  CONSUMER_GROUP,
  CUSTOMER_TOPIC,
  handleCustomerEvents,
  startCustomerConsumer,
} from "./consumer.ts";
import { isNewer, newestPerCustomer } from "./domain/customers.ts";

const logger: Logger = createLogger({ level: "error" });

interface QuoteData {
  id: string;
  clientId: string | null;
  clientName: string | null;
}

let clock = Date.parse("2030-01-01T00:00:00.000Z");
/** Each event here occurs a second after the one before, unless a test says otherwise. */
const tick = (): string => new Date(clock += 1_000).toISOString();

/** A `customer.*` event as the CRM writes it: the whole customer, as the change left it. */
function customerEvent(
  organizationId: string,
  type: "customer.created" | "customer.updated" | "customer.deleted",
  customer: { id: string; companyName: string; isArchived?: boolean },
  occurredAt: string = tick(),
): BusEvent {
  return {
    id: crypto.randomUUID(),
    type,
    organizationId,
    aggregateId: customer.id,
    occurredAt,
    data: { ...CUSTOMER_EXAMPLE, isArchived: false, ...customer },
  };
}

async function quoteFor(
  h: ServiceHarness<Config>,
  org: string,
  clientId: string | null,
  reference = "Staff tees",
): Promise<QuoteData> {
  return await okAs<QuoteData>(h, "POST", "/v1/quotes", org, { clientId, reference });
}

const clientNameOf = async (h: ServiceHarness<Config>, org: string, id: string) =>
  (await okAs<QuoteData>(h, "GET", `/v1/quotes/${id}`, org)).clientName;

async function searched(h: ServiceHarness<Config>, org: string, text: string): Promise<string[]> {
  const page = await okAs<{ items: QuoteData[] }>(
    h,
    "GET",
    `/v1/quotes?search=${encodeURIComponent(text)}`,
    org,
  );
  return page.items.map((q) => q.id);
}

const apply = (h: ServiceHarness<Config>, events: BusEvent[]) =>
  handleCustomerEvents(h.deps.sql, logger, events);

Deno.test("customer events: created, updated and deleted give each quote its clientName", async () => {
  await using h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const customer = { id: crypto.randomUUID(), companyName: "Riverside Bakery" };
  const quote = await quoteFor(h, org, customer.id);
  const noClient = await quoteFor(h, org, null);
  assertEquals(quote.clientName, null, "not known before any event");

  await apply(h, [customerEvent(org, "customer.created", customer)]);
  assertEquals(await clientNameOf(h, org, quote.id), "Riverside Bakery");
  assertEquals(await clientNameOf(h, org, noClient.id), null);

  // Archiving keeps the name; every answer that holds the quote carries it.
  await apply(h, [
    customerEvent(org, "customer.updated", { ...customer, companyName: "Riverside Bakehouse" }),
    customerEvent(org, "customer.updated", {
      ...customer,
      companyName: "Riverside Bakehouse",
      isArchived: true,
    }),
  ]);
  const patched = await okAs<QuoteData>(h, "PATCH", `/v1/quotes/${quote.id}`, org, {
    notes: "Rush",
  });
  assertEquals(patched.clientName, "Riverside Bakehouse");
  const sent = await okAs<QuoteData>(h, "POST", `/v1/quotes/${quote.id}/status`, org, {
    status: "sent",
  });
  assertEquals(sent.clientName, "Riverside Bakehouse");
  const listed = await okAs<{ items: QuoteData[] }>(h, "GET", "/v1/quotes", org);
  assertEquals(
    listed.items.map((q) => [q.id, q.clientName]).sort(),
    [[quote.id, "Riverside Bakehouse"], [noClient.id, null]].sort(),
  );
  const [row] = await h.sql<{ is_archived: boolean }[]>`
    SELECT is_archived FROM crm_customers WHERE id = ${customer.id}`;
  assertEquals(row?.is_archived, true);

  // A quote created after the customer is known answers its name at once.
  assertEquals((await quoteFor(h, org, customer.id)).clientName, "Riverside Bakehouse");

  await apply(h, [customerEvent(org, "customer.deleted", customer)]);
  assertEquals(await clientNameOf(h, org, quote.id), null, "a deleted customer has no name");
});

Deno.test("clientName is read-only: a quote body that sets it is refused by name", async () => {
  await using h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const quote = await quoteFor(h, org, crypto.randomUUID());
  for (
    const [method, path] of [["POST", "/v1/quotes"], ["PATCH", `/v1/quotes/${quote.id}`]] as const
  ) {
    const answer = await callAs(h, method, path, org, { clientName: "Made up" });
    assertEquals(answer.status, 400, `${method} ${path}`);
    assert(answer.body.details?.some((d) => d.path === "clientName"), JSON.stringify(answer.body));
  }
  assertEquals(await clientNameOf(h, org, quote.id), null);
});

Deno.test("customer events: a repeated or late event changes nothing", async () => {
  await using h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const customer = { id: crypto.randomUUID(), companyName: "First name" };
  const quote = await quoteFor(h, org, customer.id);
  const created = customerEvent(org, "customer.created", customer);
  const renamed = customerEvent(org, "customer.updated", { ...customer, companyName: "Second" });
  const renamedAgain = customerEvent(org, "customer.updated", {
    ...customer,
    companyName: "Third",
  });

  await apply(h, [created, renamed, renamedAgain]);
  assertEquals(await clientNameOf(h, org, quote.id), "Third");

  // The batch offered again (a crash before its position was committed), then an older event
  // delivered once more after the newer ones (a relay that published it twice).
  await apply(h, [created, renamed, renamedAgain]);
  await apply(h, [renamed]);
  assertEquals(await clientNameOf(h, org, quote.id), "Third");

  // Newest first in one batch: the newest still wins.
  const fourth = customerEvent(org, "customer.updated", { ...customer, companyName: "Fourth" });
  const fifth = customerEvent(org, "customer.updated", { ...customer, companyName: "Fifth" });
  await apply(h, [fifth, fourth]);
  assertEquals(await clientNameOf(h, org, quote.id), "Fifth");

  // The same millisecond: the larger event id is the later (UUIDv7 ids grow with time).
  const at = tick();
  const [low, high] = [
    "0193a3d1-0000-7000-8000-000000000001",
    "0193a3d1-0000-7000-8000-000000000002",
  ];
  await apply(h, [
    {
      ...customerEvent(org, "customer.updated", { ...customer, companyName: "High" }, at),
      id: high,
    },
    { ...customerEvent(org, "customer.updated", { ...customer, companyName: "Low" }, at), id: low },
  ]);
  assertEquals(await clientNameOf(h, org, quote.id), "High");

  // After a delete, an older update arriving late does not bring the customer back.
  await apply(h, [customerEvent(org, "customer.deleted", customer)]);
  await apply(h, [renamedAgain, fifth]);
  assertEquals(await clientNameOf(h, org, quote.id), null);
  const [row] = await h.sql<{ deleted: boolean; event_id: string }[]>`
    SELECT deleted, event_id FROM crm_customers WHERE organization_id = ${org}`;
  assertEquals(row?.deleted, true);
});

Deno.test("customer events: only customer.* events of the quote's own organisation count", async () => {
  await using h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const other = crypto.randomUUID();
  const customer = { id: crypto.randomUUID(), companyName: "Ours" };
  const quote = await quoteFor(h, org, customer.id);
  const otherQuote = await quoteFor(h, other, customer.id);
  const logged: string[] = [];
  const unreadable = { ...customerEvent(org, "customer.updated", customer), data: { id: 1 } };

  await handleCustomerEvents(
    h.deps.sql,
    createLogger({ level: "error", write: (l) => logged.push(l) }),
    [
      customerEvent(org, "customer.created", customer),
      // Another organisation's event, even naming the same id, is that organisation's customer.
      customerEvent(other, "customer.created", { ...customer, companyName: "Theirs" }),
      // Not a customer: acknowledged with the batch, never applied.
      { ...customerEvent(org, "customer.updated", customer), type: "custom_field.created" },
      // A payload quotes cannot read is skipped, and said so, without holding the batch back.
      unreadable,
    ],
  );
  assertEquals(await clientNameOf(h, org, quote.id), "Ours");
  assertEquals(await clientNameOf(h, other, otherQuote.id), "Theirs");
  assertEquals(logged.length, 1);
  const line = JSON.parse(logged[0]!) as { msg: string; eventId: string; problems: unknown[] };
  assertEquals([line.msg, line.eventId], [
    "customer event with an unreadable payload skipped",
    unreadable.id,
  ]);
  assertEquals(line.problems.length, 3, "id, companyName and isArchived named");
});

Deno.test("GET /v1/quotes search matches the client's name as the projection knows it", async () => {
  await using h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const bakery = { id: crypto.randomUUID(), companyName: "Riverside 100% Bakery" };
  const quote = await quoteFor(h, org, bakery.id, "Staff tees");
  const other = await quoteFor(h, org, crypto.randomUUID(), "Hoodies");
  assertEquals(await searched(h, org, "riverside"), [], "an unknown client has no name yet");

  await apply(h, [customerEvent(org, "customer.created", bakery)]);
  assertEquals(await searched(h, org, "riverside"), [quote.id], "case-insensitive, in the name");
  assertEquals(await searched(h, org, "100% bak"), [quote.id], "wildcards taken literally");
  assertEquals(await searched(h, org, "1000"), []);
  assertEquals(await searched(h, org, "hoodies"), [other.id], "the other fields still match");
  assertEquals(await searched(h, crypto.randomUUID(), "riverside"), [], "another organisation");

  await apply(h, [customerEvent(org, "customer.updated", { ...bakery, companyName: "Lakeside" })]);
  assertEquals(await searched(h, org, "riverside"), []);
  assertEquals(await searched(h, org, "lakeside"), [quote.id]);

  await apply(h, [customerEvent(org, "customer.deleted", bakery)]);
  assertEquals(await searched(h, org, "lakeside"), []);
});

Deno.test("the consumer catches up on customer events published while it was stopped", async () => {
  await using h = await serviceHarness(quotesService);
  const org = crypto.randomUUID();
  const customer = { id: crypto.randomUUID(), companyName: "Before the stop" };
  const quote = await quoteFor(h, org, customer.id);
  // The CRM's side: its relay publishes to its topic whether quotes runs or not.
  const crm = await createEmbeddedBus({ url: h.databaseUrl, logger });
  try {
    const nameIs = (name: string | null) => async () =>
      (await clientNameOf(h, org, quote.id)) === name;

    let bus = await createEmbeddedBus({ url: h.databaseUrl, logger, pollIntervalMs: 100 });
    let consumer = await startCustomerConsumer({ sql: h.sql, bus, logger });
    await crm.publish(CUSTOMER_TOPIC, [customerEvent(org, "customer.created", customer)]);
    await waitFor("the created customer's name", nameIs("Before the stop"), 10_000);

    // Quotes stops (its consumer and its bus, as the process does on SIGTERM).
    await consumer.stop();
    await bus.close();
    await crm.publish(CUSTOMER_TOPIC, [
      customerEvent(org, "customer.updated", { ...customer, companyName: "While stopped" }),
      customerEvent(org, "customer.updated", {
        ...customer,
        companyName: "While stopped, again",
      }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assertEquals(await clientNameOf(h, org, quote.id), "Before the stop", "nobody consumed");

    // Started again: the group's stored position is where it stopped, so it reads the rest.
    bus = await createEmbeddedBus({ url: h.databaseUrl, logger, pollIntervalMs: 100 });
    consumer = await startCustomerConsumer({ sql: h.sql, bus, logger });
    try {
      await waitFor("the name changed while stopped", nameIs("While stopped, again"), 10_000);
      const [offset] = await h.sql<{ position: string }[]>`
        SELECT position::text FROM eventbus.consumer_offsets
        WHERE group_id = ${CONSUMER_GROUP} AND topic = ${CUSTOMER_TOPIC}`;
      assertEquals(offset?.position, "3", "the group has read the topic's three events");
    } finally {
      await consumer.stop();
      await bus.close();
    }
  } finally {
    await crm.close();
  }
});

Deno.test("newestPerCustomer keeps each customer's newest event whatever their order", () => {
  const org = crypto.randomUUID();
  const fact = (customerId: string, occurredAt: string, eventId: string, name: string) => ({
    organizationId: org,
    customerId,
    name,
    isArchived: false,
    deleted: false,
    occurredAt,
    eventId,
  });
  const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
  const id1 = "0193a3d1-0000-7000-8000-000000000001";
  const id2 = "0193a3d1-0000-7000-8000-000000000002";
  const t1 = "2030-01-01T00:00:00.001Z";
  const t2 = "2030-01-01T00:00:00.002Z";
  assert(isNewer({ occurredAt: t2, eventId: id1 }, { occurredAt: t1, eventId: id2 }));
  assert(isNewer({ occurredAt: t1, eventId: id2 }, { occurredAt: t1, eventId: id1 }));
  assert(!isNewer({ occurredAt: t1, eventId: id1 }, { occurredAt: t1, eventId: id1 }));
  assertEquals(
    newestPerCustomer([
      fact(a, t2, id1, "a newest"),
      fact(b, t1, id1, "b old"),
      fact(a, t1, id2, "a old"),
      fact(b, t1, id2, "b newest"),
      fact(a, t2, id1, "a newest"),
    ]).map((f) => f.name),
    ["a newest", "b newest"],
  );
});
