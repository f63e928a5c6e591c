/**
 * The behaviour every event bus transport must show, as one suite that each transport's test
 * file runs against a real broker or database. Code above `EventBus` relies on exactly this.
 */
import assert from "node:assert/strict";
import { uuidv7 } from "../ids.ts";
import { waitFor } from "../net.ts";
import type { BusEvent, BusSubscription, EventBus } from "./bus.ts";
import { topicOf } from "./bus.ts";

export interface TransportFixture {
  bus: EventBus;
  /** Another bus on the same broker or database, as a second process would have. */
  newBus(): Promise<EventBus>;
  cleanup(): Promise<void>;
}

const QUOTES = topicOf("quotes");
const GATEWAY = topicOf("gateway");
const WAIT_MS = 20_000;

/** A `quote.deleted` event: its data satisfies the catalogue schema the Kafka broker enforces. */
function quoteDeleted(organizationId: string, extra: Partial<BusEvent> = {}): BusEvent {
  const quoteId = crypto.randomUUID();
  return {
    id: uuidv7(),
    type: "quote.deleted",
    organizationId,
    aggregateId: quoteId,
    occurredAt: new Date().toISOString(),
    data: { id: quoteId },
    ...extra,
  };
}

function apiKeyRevoked(organizationId: string): BusEvent {
  const keyId = crypto.randomUUID();
  return {
    id: uuidv7(),
    type: "api_key.revoked",
    organizationId,
    aggregateId: null,
    occurredAt: new Date().toISOString(),
    data: { id: keyId, organizationId },
  };
}

interface Call {
  topic: string;
  events: BusEvent[];
}

/**
 * A handler that records the calls carrying this test's organisations (a broker may be shared
 * with other tests) and can wait until given events have arrived.
 */
class Recorder {
  readonly calls: Call[] = [];
  readonly #organizations: Set<string>;

  constructor(organizations: Iterable<string>) {
    this.#organizations = new Set(organizations);
  }

  record(events: BusEvent[], topic: string): Call | undefined {
    const mine = events.filter((e) => this.#organizations.has(e.organizationId));
    if (mine.length === 0) return undefined;
    const call = { topic, events: mine };
    this.calls.push(call);
    return call;
  }

  get events(): BusEvent[] {
    return this.calls.flatMap((c) => c.events);
  }

  ids(): Set<string> {
    return new Set(this.events.map((e) => e.id));
  }

  async waitForAll(expected: readonly BusEvent[], what: string): Promise<void> {
    try {
      await waitFor(
        what,
        () => {
          const seen = this.ids();
          return Promise.resolve(expected.every((e) => seen.has(e.id)));
        },
        WAIT_MS,
        25,
      );
    } catch (error) {
      const seen = this.ids();
      const missing = expected.filter((e) => !seen.has(e.id)).length;
      throw new Error(`${what}: ${missing} of ${expected.length} events never arrived`, {
        cause: error,
      });
    }
  }
}

/** One id per event, in first-arrival order. */
function firstArrivals(events: readonly BusEvent[]): string[] {
  const seen = new Set<string>();
  const order: string[] = [];
  for (const event of events) {
    if (!seen.has(event.id)) order.push(event.id);
    seen.add(event.id);
  }
  return order;
}

/**
 * Registers the transport suite. `setup` runs once per test and gives a fresh broker or database
 * (or one shared between tests: every test uses its own organisations and groups).
 */
export function defineTransportSuite(
  name: string,
  setup: () => Promise<TransportFixture>,
): void {
  const test = (title: string, body: (fixture: Harness) => Promise<void>): void => {
    Deno.test(`${name}: ${title}`, async () => {
      const harness = new Harness(await setup());
      try {
        await body(harness);
      } finally {
        await harness.close();
      }
    });
  };

  test("a subscriber receives every published event with all its fields", async (h) => {
    const org = crypto.randomUUID();
    const recorder = new Recorder([org]);
    await h.subscribe(h.bus, {
      groupId: h.group("intact"),
      topics: [QUOTES, GATEWAY],
      handle: (events, topic) => {
        recorder.record(events, topic);
        return Promise.resolve();
      },
    });
    const quotes = [
      quoteDeleted(org, {
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      }),
      quoteDeleted(org, { aggregateId: null }),
      quoteDeleted(org),
    ];
    const gateway = [apiKeyRevoked(org)];
    await h.bus.publish(QUOTES, quotes);
    await h.bus.publish(GATEWAY, gateway);

    await recorder.waitForAll([...quotes, ...gateway], "all events");
    const received = new Map(recorder.calls.flatMap((c) => c.events.map((e) => [e.id, e])));
    for (const sent of [...quotes, ...gateway]) {
      assert.deepEqual(received.get(sent.id), sent);
    }
    const topicOfEvent = new Map(
      recorder.calls.flatMap((c) => c.events.map((e) => [e.id, c.topic])),
    );
    for (const sent of quotes) assert.equal(topicOfEvent.get(sent.id), QUOTES);
    for (const sent of gateway) assert.equal(topicOfEvent.get(sent.id), GATEWAY);
  });

  test("one organisation's events arrive in the order they were published", async (h) => {
    const orgs = Array.from({ length: 5 }, () => crypto.randomUUID());
    const published: BusEvent[] = [];
    for (let i = 0; i < 300; i++) {
      // An uneven mix, so each publish carries several organisations in varying proportions.
      published.push(quoteDeleted(orgs[(i * 7 + Math.floor(i / 13)) % orgs.length]!));
    }
    for (let i = 0; i < published.length; i += 40) {
      await h.bus.publish(QUOTES, published.slice(i, i + 40));
    }
    const recorder = new Recorder(orgs);
    await h.subscribe(h.bus, {
      groupId: h.group("order"),
      topics: [QUOTES],
      handle: (events, topic) => {
        recorder.record(events, topic);
        return Promise.resolve();
      },
    });
    await recorder.waitForAll(published, "300 events");
    for (const org of orgs) {
      const sent = published.filter((e) => e.organizationId === org).map((e) => e.id);
      const got = firstArrivals(recorder.events.filter((e) => e.organizationId === org));
      assert.deepEqual(got, sent, `events of organisation ${org} arrived out of order`);
    }
  });

  test("a new member of a group resumes after the last committed position", async (h) => {
    const orgs = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const groupId = h.group("resume");
    const events = (count: number): BusEvent[] =>
      Array.from({ length: count }, (_, i) => quoteDeleted(orgs[i % orgs.length]!));

    const before = new Recorder(orgs);
    let lastCall: Call | undefined;
    let member: BusSubscription | undefined = undefined;
    let stopping: Promise<void> | undefined;
    let stopOnNextCall = false;
    member = await h.subscribe(h.bus, {
      groupId,
      topics: [QUOTES],
      handle: (events, topic) => {
        lastCall = before.record(events, topic) ?? lastCall;
        // Stopping from inside the handler leaves the rest unhandled; this call still counts.
        if (stopOnNextCall && member !== undefined) stopping ??= member.stop();
        return Promise.resolve();
      },
    });
    // Several handled calls first, so that a position never committed would show up below as
    // repeats from before the last call.
    const handledOneByOne: BusEvent[] = [];
    for (let i = 0; i < 3; i++) {
      const chunk = events(9);
      await h.bus.publish(QUOTES, chunk);
      await before.waitForAll(chunk, `chunk ${i + 1} before the stop`);
      handledOneByOne.push(...chunk);
    }
    stopOnNextCall = true;
    const interrupted = events(30);
    await h.bus.publish(QUOTES, interrupted);
    await waitFor("the member to stop", () => Promise.resolve(stopping !== undefined), WAIT_MS);
    await stopping;
    const handledBefore = before.ids();
    const whileStopped = events(30);
    await h.bus.publish(QUOTES, whileStopped);

    const after = new Recorder(orgs);
    await h.subscribe(await h.newBus(), {
      groupId,
      topics: [QUOTES],
      handle: (events, topic) => {
        after.record(events, topic);
        return Promise.resolve();
      },
    });
    const all = [...handledOneByOne, ...interrupted, ...whileStopped];
    const missed = all.filter((e) => !handledBefore.has(e.id));
    await after.waitForAll(missed, "events the first member never handled");

    const allowedRepeats = new Set(lastCall?.events.map((e) => e.id));
    for (const event of after.events) {
      if (handledBefore.has(event.id)) {
        assert.ok(
          allowedRepeats.has(event.id),
          `event ${event.id} was handled and committed before, yet offered again`,
        );
      }
    }
  });

  test("a handler that throws is offered the same events again", async (h) => {
    const orgs: string[] = [crypto.randomUUID(), crypto.randomUUID()];
    const recorder = new Recorder(orgs);
    const failed: BusEvent[][] = [];
    await h.subscribe(h.bus, {
      groupId: h.group("retry"),
      topics: [QUOTES],
      handle: (events, topic) => {
        const mine = events.filter((e) => orgs.includes(e.organizationId));
        if (mine.length > 0 && failed.length < 2) {
          failed.push(mine);
          return Promise.reject(new Error("Handler failed on purpose"));
        }
        recorder.record(events, topic);
        return Promise.resolve();
      },
    });
    const published = Array.from({ length: 20 }, (_, i) => quoteDeleted(orgs[i % 2]!));
    await h.bus.publish(QUOTES, published);

    await recorder.waitForAll(published, "every event after two failures");
    assert.equal(failed.length, 2);
    const handled = recorder.ids();
    for (const event of failed.flat()) {
      assert.ok(handled.has(event.id), `event ${event.id} of a failed call was never handled`);
    }
    for (const org of orgs) {
      const sent = published.filter((e) => e.organizationId === org).map((e) => e.id);
      const got = firstArrivals(recorder.events.filter((e) => e.organizationId === org));
      assert.deepEqual(got, sent, "a failed call changed the order of later deliveries");
    }
  });

  test("two groups each receive every event", async (h) => {
    const org = crypto.randomUUID();
    const one = new Recorder([org]);
    const two = new Recorder([org]);
    await h.subscribe(h.bus, {
      groupId: h.group("one"),
      topics: [QUOTES],
      handle: (events, topic) => {
        one.record(events, topic);
        return Promise.resolve();
      },
    });
    await h.subscribe(await h.newBus(), {
      groupId: h.group("two"),
      topics: [QUOTES],
      handle: (events, topic) => {
        two.record(events, topic);
        return Promise.resolve();
      },
    });
    const published = Array.from({ length: 25 }, () => quoteDeleted(org));
    await h.bus.publish(QUOTES, published);
    await one.waitForAll(published, "group one");
    await two.waitForAll(published, "group two");
  });

  test("a new group receives events published before it subscribed", async (h) => {
    const org = crypto.randomUUID();
    const published = Array.from({ length: 15 }, () => quoteDeleted(org));
    await h.bus.publish(QUOTES, published);
    const recorder = new Recorder([org]);
    await h.subscribe(h.bus, {
      groupId: h.group("late"),
      topics: [QUOTES],
      handle: (events, topic) => {
        recorder.record(events, topic);
        return Promise.resolve();
      },
    });
    await recorder.waitForAll(published, "events published before the group existed");
    assert.deepEqual(firstArrivals(recorder.events), published.map((e) => e.id));
  });
}

/** Tracks what a test opens so that it is closed even when the test fails. */
class Harness {
  readonly bus: EventBus;
  readonly #fixture: TransportFixture;
  readonly #buses: EventBus[] = [];
  readonly #subscriptions: BusSubscription[] = [];
  readonly #run = crypto.randomUUID().slice(0, 8);

  constructor(fixture: TransportFixture) {
    this.#fixture = fixture;
    this.bus = fixture.bus;
  }

  group(purpose: string): string {
    return `test-${purpose}-${this.#run}`;
  }

  async newBus(): Promise<EventBus> {
    const bus = await this.#fixture.newBus();
    this.#buses.push(bus);
    return bus;
  }

  async subscribe(
    bus: EventBus,
    options: Parameters<EventBus["subscribe"]>[0],
  ): Promise<BusSubscription> {
    const subscription = await bus.subscribe(options);
    this.#subscriptions.push(subscription);
    return subscription;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#subscriptions.map((s) => s.stop()));
    await Promise.allSettled(this.#buses.map((b) => b.close()));
    await this.#fixture.cleanup();
  }
}
