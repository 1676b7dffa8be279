import { defineConfig } from 'drizzle-kit';

// The PostgreSQL store's schema and migrations (--db postgres://…); drizzle.config.ts is SQLite's.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/pg/schema.ts',
  out: './migrations/pg',
});
