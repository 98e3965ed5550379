-- The fingerprint of the shipped platform skills last seeded into each tenant (null: not yet). A boot seeds only the
-- live tenants whose fingerprint differs, so a restart with the same skills reads no skill file and writes nothing.
ALTER TABLE tenants ADD COLUMN platform_skills text;
