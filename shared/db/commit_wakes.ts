/**
 * Wakes after a commit, inside this process. A pool's outbox relay asks to be woken once a write
 * on that pool that recorded an event has committed (`wakeAfterCommits`), and a writer that is
 * promised this (`wakeAfterCommit`) sends no NOTIFY.
 *
 * Why not NOTIFY every time: PostgreSQL signals every backend that LISTENs in the database at
 * each commit that notified, whatever channel it listens on (async.c, SignalBackends), and each
 * wakes to read the queue. A stack has eight such backends (each process's relay, the bus
 * consumers, the delivery and mail workers), so each created quote cost eight signals sent, eight
 * processes woken and their context switches: a tenth of PostgreSQL's CPU under the 16-writer
 * create load (README "Waking the relay").
 *
 * A transaction (db/mod.ts `transaction`) or a one-statement write (`oneStatement`) opens a scope
 * on what it writes through; the writer asks inside it, and the pool's wake runs once that write
 * has committed, never after a rollback. Where no scope is open (a write of postgres.js's own
 * `sql.begin`, a pool with no relay in this process), the writer is told no and notifies.
 */

type Wake = () => void;

/** A write in progress: whether an event asked for its pool's wake. */
export interface CommitScope {
  readonly wake: Wake;
  asked: boolean;
}

/** The relays' wakes of each pool, in this process (one, unless a test starts more). */
const wakes = new WeakMap<object, Set<Wake>>();
/** The open write of each transaction connection, or of a pinned pool while its statement is built. */
const scopes = new WeakMap<object, CommitScope>();

/**
 * Registers `wake` to run after each committed write on `pool` that recorded an event; answers
 * the call that takes it back.
 */
export function wakeAfterCommits(pool: object, wake: Wake): () => void {
  const registered = wakes.get(pool) ?? new Set<Wake>();
  wakes.set(pool, registered);
  // Its own function, so that registering one wake twice takes back one registration.
  const entry: Wake = () => wake();
  registered.add(entry);
  return () => void registered.delete(entry);
}

/**
 * Opens the scope of a write on `pool` that statements reach through `via` (a transaction's
 * connection, or a pinned pool while one statement is built); null when nothing on the pool asks
 * to be woken.
 */
export function openCommitScope(pool: object, via: object): CommitScope | null {
  const registered = wakes.get(pool);
  if (!registered?.size) return null;
  const each = [...registered];
  const scope: CommitScope = { wake: () => each.forEach((wake) => wake()), asked: false };
  scopes.set(via, scope);
  return scope;
}

/** Closes the scope opened on `via`: writers asking there from now on are told no. */
export function closeCommitScope(via: object, scope: CommitScope | null): void {
  if (scope && scopes.get(via) === scope) scopes.delete(via);
}

/** The write committed: its pool's wake runs if an event asked for it. */
export function committed(scope: CommitScope | null): void {
  if (scope?.asked) scope.wake();
}

/**
 * Whether the relay of `tx`'s pool will be woken in this process once the write `tx` belongs to
 * has committed; asking is what arranges it. False: the caller must wake it itself (NOTIFY).
 */
export function wakeAfterCommit(tx: object): boolean {
  const scope = scopes.get(tx);
  if (!scope) return false;
  scope.asked = true;
  return true;
}
