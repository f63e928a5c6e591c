/**
 * Makes a PostgreSQL database ready for the stack's roles, as its superuser, and exits: the owner
 * that runs migrations and the runtime role the processes serve as (README "Database roles"),
 * their rights on the database, and whatever an older version left owned by the superuser handed
 * to the owner. Idempotent: compose runs it before every start (service `db-roles`), and an
 * operator of an external server may run it once with `deno task db:roles` instead of the SQL the
 * README gives.
 *
 *   SUPERUSER_DATABASE_URL=postgres://postgres:…@host:5432/printshop \
 *   DATABASE_ROLE_PASSWORD=… deno task db:roles
 *
 * The two roles take DATABASE_ROLE_PASSWORD; the processes then get
 * DATABASE_URL=postgres://printshop_app:…@host/printshop and
 * MIGRATION_DATABASE_URL=postgres://printshop_owner:…@host/printshop.
 */
import { z } from "zod";
import { loadConfigOrExit, postgresUrl } from "@printshop/shared/config";
import { prepareDatabaseRoles } from "@printshop/shared/launcher";
import { ROLES } from "@printshop/shared/db/tenancy";

export const ConfigSchema = z.object({
  SUPERUSER_DATABASE_URL: postgresUrl(),
  // It goes into the processes' URLs: URL-safe characters keep it one token there.
  DATABASE_ROLE_PASSWORD: z.string().min(16, "must be at least 16 characters")
    .regex(/^[A-Za-z0-9._~-]+$/, "must be URL-safe (letters, digits, . _ ~ -)"),
});

if (import.meta.main) {
  const config = loadConfigOrExit(ConfigSchema);
  await prepareDatabaseRoles(config.SUPERUSER_DATABASE_URL, config.DATABASE_ROLE_PASSWORD);
  const database = new URL(config.SUPERUSER_DATABASE_URL).pathname.slice(1);
  console.log(`roles ${ROLES.owner} and ${ROLES.app} ready on database "${database}"`);
}
