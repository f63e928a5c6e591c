/**
 * Who gets a connection when connections run short. Pure bookkeeping, no I/O: the edge tells it
 * what each connection is doing, and asks it whether a newcomer is admitted and, if so, which
 * connection must make room.
 *
 * The rules, as nginx reclaims idle keep-alive connections and does a little better:
 * - One address group (an IPv4 address, an IPv6 /64) holds at most `maxPerAddress` connections;
 *   a newcomer from a group at its share takes the place of that group's own cheapest one.
 * - Within `graceMs` of connecting (or of its last answer) a connection keeps its place: a client
 *   that has just connected may have its request on its way, and is never dropped unanswered;
 *   a newcomer that finds nobody past their grace is refused (503) instead.
 * - At `maxConnections`, a newcomer takes the place of the connection that costs others most:
 *   from the groups holding the most connections first, a connection being closed, then one
 *   idle longest, then the slowest head (begun longest ago), then the slowest body.
 * - A connection with a request in flight (its head complete, its answer owed) is never chosen:
 *   only when every connection is busy is a newcomer refused.
 * - Above `highWater`, idle connections are given up, longest idle first (`reclaim`), so a flood
 *   of connections that never send anything is thinned before anyone has to be refused.
 */

/** What a connection is doing, from cheapest to lose to never lost. */
export type Standing =
  /** Answered and being closed. */
  | "closing"
  /** Nothing owed either way: a new connection, or one between requests. */
  | "idle"
  /** Part of a request head has arrived. */
  | "head"
  /** The head was passed on; its body is arriving. */
  | "body"
  /** A complete request waits for, or is getting, its answer. */
  | "busy";

/** The order in which connections are given up. */
const EVICTION_ORDER = ["closing", "idle", "head", "body"] as const;
const RECLAIM_ORDER = ["closing", "idle"] as const;
type Evictable = (typeof EVICTION_ORDER)[number];
/** How many of the heaviest groups are searched before any group will do. */
const HEAVIEST_SEARCHED = 8;

export interface AdmissionLimits {
  maxConnections: number;
  maxPerAddress: number;
  highWater: number;
  /** How long a connection keeps its place before it can be given up for another address. */
  graceMs: number;
}

export type Admitted<C> =
  | { admitted: true; evict: C | null }
  | { admitted: false };

interface Group<C> {
  key: string;
  members: Set<C>;
  byStanding: Record<Evictable, Set<C>>;
}

interface Entry<C> {
  group: Group<C>;
  standing: Standing;
  /** When it took its standing. */
  since: number;
  /** A trusted proxy's own connection: it carries many clients, so no share applies to it. */
  exempt: boolean;
}

const standingSets = <C>(): Record<Evictable, Set<C>> => ({
  closing: new Set(),
  idle: new Set(),
  head: new Set(),
  body: new Set(),
});

export class Admission<C> {
  readonly #limits: AdmissionLimits;
  readonly #entries = new Map<C, Entry<C>>();
  readonly #groups = new Map<string, Group<C>>();
  /** Every evictable connection by standing, each set in the order they took that standing. */
  readonly #byStanding = standingSets<C>();
  /** Groups by how many connections they hold, to find the heaviest without a scan. */
  readonly #byCount = new Map<number, Set<Group<C>>>();
  #maxCount = 0;

  readonly #now: () => number;

  constructor(limits: AdmissionLimits, now: () => number = Date.now) {
    this.#limits = limits;
    this.#now = now;
  }

  get limits(): AdmissionLimits {
    return this.#limits;
  }

  /** Connections counted now. */
  get size(): number {
    return this.#entries.size;
  }

  /** How many connections `group` holds. */
  held(group: string): number {
    return this.#groups.get(group)?.members.size ?? 0;
  }

  /**
   * Whether a newcomer from `group` may have a connection, and which one it replaces (already
   * forgotten here; the caller closes it). Exempt newcomers are held to the total only.
   */
  admit(group: string, exempt = false): Admitted<C> {
    const own = this.#groups.get(group);
    if (!exempt && own && own.members.size >= this.#limits.maxPerAddress) {
      // A group that opens more than its share makes room itself, from its own connections.
      const victim = this.#cheapestOf(own, EVICTION_ORDER);
      return victim === null ? { admitted: false } : { admitted: true, evict: this.#take(victim) };
    }
    if (this.#entries.size < this.#limits.maxConnections) return { admitted: true, evict: null };
    const victim = this.#costliest(EVICTION_ORDER);
    return victim === null ? { admitted: false } : { admitted: true, evict: this.#take(victim) };
  }

  /** Counts a connection admitted by `admit`, as idle. */
  add(connection: C, group: string, exempt = false): void {
    const entry: Entry<C> = {
      group: this.#join(group),
      standing: "idle",
      since: this.#now(),
      exempt,
    };
    this.#entries.set(connection, entry);
    entry.group.members.add(connection);
    this.#countChanged(entry.group, entry.group.members.size - 1);
    this.#enter(connection, entry);
  }

  /**
   * Moves a connection to the group it turned out to belong to (a proxy's connection, once the
   * PROXY header names the client): like a newcomer there, it may replace one of that group's
   * own (the caller closes it), and when the group's share is all busy it is not moved and the
   * caller refuses it.
   */
  regroup(connection: C, group: string): Admitted<C> {
    const entry = this.#entries.get(connection);
    if (!entry) return { admitted: false };
    if (entry.group.key === group && !entry.exempt) return { admitted: true, evict: null };
    const target = this.#groups.get(group);
    let evict: C | null = null;
    if (target && target.members.size >= this.#limits.maxPerAddress) {
      const victim = this.#cheapestOf(target, EVICTION_ORDER);
      if (victim === null) return { admitted: false };
      evict = this.#take(victim);
    }
    this.#leave(connection, entry);
    this.#forgetMember(connection, entry);
    entry.group = this.#join(group);
    entry.exempt = false;
    entry.group.members.add(connection);
    this.#countChanged(entry.group, entry.group.members.size - 1);
    this.#enter(connection, entry);
    return { admitted: true, evict };
  }

  /** Records what a connection is doing now; it goes to the back of its new standing's queue. */
  set(connection: C, standing: Standing): void {
    const entry = this.#entries.get(connection);
    if (!entry || entry.standing === standing) return;
    this.#leave(connection, entry);
    entry.standing = standing;
    entry.since = this.#now();
    this.#enter(connection, entry);
  }

  /** Forgets a connection that closed. */
  remove(connection: C): void {
    const entry = this.#entries.get(connection);
    if (!entry) return;
    this.#take(connection);
  }

  /** Above the high-water mark, the next idle connection to give up; null when at or below it. */
  reclaim(): C | null {
    if (this.#entries.size <= this.#limits.highWater) return null;
    const victim = this.#costliest(RECLAIM_ORDER);
    return victim === null ? null : this.#take(victim);
  }

  /** A connection sending its body slowest, to free its link for a complete request. */
  reclaimBody(): C | null {
    const victim = this.#costliest(["body"]);
    return victim === null ? null : this.#take(victim);
  }

  #join(key: string): Group<C> {
    let group = this.#groups.get(key);
    if (!group) {
      group = { key, members: new Set(), byStanding: standingSets() };
      this.#groups.set(key, group);
    }
    return group;
  }

  #enter(connection: C, entry: Entry<C>): void {
    if (entry.standing === "busy") return;
    this.#byStanding[entry.standing].add(connection);
    entry.group.byStanding[entry.standing].add(connection);
  }

  #leave(connection: C, entry: Entry<C>): void {
    if (entry.standing === "busy") return;
    this.#byStanding[entry.standing].delete(connection);
    entry.group.byStanding[entry.standing].delete(connection);
  }

  #forgetMember(connection: C, entry: Entry<C>): void {
    const group = entry.group;
    group.members.delete(connection);
    this.#countChanged(group, group.members.size + 1);
    if (group.members.size === 0) this.#groups.delete(group.key);
  }

  /** Forgets `connection` entirely and answers it. */
  #take(connection: C): C {
    const entry = this.#entries.get(connection)!;
    this.#leave(connection, entry);
    this.#forgetMember(connection, entry);
    this.#entries.delete(connection);
    return connection;
  }

  #countChanged(group: Group<C>, before: number): void {
    const after = group.members.size;
    if (before > 0) {
      const bucket = this.#byCount.get(before)!;
      bucket.delete(group);
      if (bucket.size === 0) this.#byCount.delete(before);
    }
    if (after > 0) {
      let bucket = this.#byCount.get(after);
      if (!bucket) this.#byCount.set(after, bucket = new Set());
      bucket.add(group);
    }
    if (after > this.#maxCount) this.#maxCount = after;
    while (this.#maxCount > 0 && !this.#byCount.has(this.#maxCount)) this.#maxCount--;
  }

  /**
   * The first connection of the allowed standings that has had its grace: the oldest of each
   * standing, since each set keeps the order in which its members took that standing.
   */
  #firstOf(sets: Record<Evictable, Set<C>>, order: readonly Evictable[], before: number): C | null {
    for (const standing of order) {
      const first = firstOf(sets[standing]);
      if (first === null) continue;
      if (standing === "closing" || this.#entries.get(first)!.since <= before) return first;
    }
    return null;
  }

  #cheapestOf(group: Group<C>, order: readonly Evictable[]): C | null {
    return this.#firstOf(group.byStanding, order, this.#now() - this.#limits.graceMs);
  }

  /**
   * The connection that costs others most among those of the allowed standings: from the
   * groups holding the most connections (two or more), the cheapest to lose of the first few
   * searched; failing that, the cheapest to lose of any group.
   */
  #costliest(order: readonly Evictable[]): C | null {
    const before = this.#now() - this.#limits.graceMs;
    let best: C | null = null;
    let bestRank = order.length;
    let bestSince = Infinity;
    let searched = 0;
    for (let count = this.#maxCount; count > 1 && best === null; count--) {
      for (const group of this.#byCount.get(count) ?? []) {
        for (let rank = 0; rank < order.length && rank <= bestRank; rank++) {
          const first = firstOf(group.byStanding[order[rank]!]);
          if (first === null) continue;
          const since = this.#entries.get(first)!.since;
          if (order[rank] !== "closing" && since > before) continue;
          if (rank < bestRank || since < bestSince) {
            [best, bestRank, bestSince] = [first, rank, since];
          }
          break;
        }
        if (++searched >= HEAVIEST_SEARCHED) break;
      }
      if (searched >= HEAVIEST_SEARCHED) break;
    }
    return best ?? this.#firstOf(this.#byStanding, order, before);
  }
}

function firstOf<C>(set: Set<C>): C | null {
  for (const item of set) return item;
  return null;
}
