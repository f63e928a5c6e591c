/**
 * The one-shot compose runs before the apps (service db-roles): run as a process, twice, on a
 * database of its own, it leaves roles the processes can log in as and migrate with.
 */
import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { connect } from "@printshop/shared/db";
import { ROLES, roleUrl } from "@printshop/shared/db/tenancy";
import { createTestDatabase } from "@printshop/shared/testing";

const SCRIPT = new URL("./db_roles.ts", import.meta.url);

async function run(env: Record<string, string>): Promise<{ code: number; out: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-env", "--allow-read", SCRIPT.pathname],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
  return { code: output.code, out: decode(output.stdout) + decode(output.stderr) };
}

Deno.test("db-roles: idempotent, and the roles it leaves log in with its password", async () => {
  const db = await createTestDatabase();
  // The test harness shares its roles across parallel tests with the superuser's password: the
  // script must be given the same one, or it would change it under them.
  const password = decodeURIComponent(new URL(db.url).password);
  try {
    const refused = await run({ SUPERUSER_DATABASE_URL: db.url, DATABASE_ROLE_PASSWORD: "short" });
    assertEquals(refused.code, 1);
    assert.match(refused.out, /DATABASE_ROLE_PASSWORD/);
    assert.doesNotMatch(refused.out, new RegExp(password), "no secret in the message");
    for (let i = 0; i < 2; i++) {
      const done = await run({ SUPERUSER_DATABASE_URL: db.url, DATABASE_ROLE_PASSWORD: password });
      assertEquals(done.code, 0, done.out);
      assert.match(done.out, /printshop_owner and printshop_app ready/);
      assert.doesNotMatch(done.out, new RegExp(password));
    }
    const owner = connect(roleUrl(db.url, ROLES.owner, password), { schema: "public", max: 1 });
    const app = connect(roleUrl(db.url, ROLES.app, password), { schema: "public", max: 1 });
    try {
      // The owner may make a service's schema; the runtime role may not.
      await owner`CREATE SCHEMA made_by_owner`;
      await assert.rejects(app`CREATE SCHEMA made_by_app`, /permission denied/);
      const [me] = await app<{ name: string; bypass: boolean }[]>`
        SELECT rolname AS name, rolbypassrls AS bypass FROM pg_roles WHERE rolname = current_user`;
      assertEquals(me, { name: ROLES.app, bypass: false });
    } finally {
      await owner.end();
      await app.end();
    }
  } finally {
    await db.drop();
  }
});
