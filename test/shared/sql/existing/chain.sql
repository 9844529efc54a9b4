-- `sqlite3 .dump` of a chain database made by commit 8b52774, the code before one migration runner
-- served every store (see migrate.test.ts). Never edit: it stands for files already out there.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_versions (module TEXT PRIMARY KEY, version INTEGER NOT NULL);
INSERT INTO schema_versions VALUES('simnet.chain',1);
CREATE TABLE simnet_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO simnet_meta VALUES('clock','{"name":"simnet","genesis":1733616000,"epochSeconds":3}');
CREATE TABLE simnet_deals (deal_id INTEGER PRIMARY KEY, proposal TEXT NOT NULL, proposed_epoch INTEGER NOT NULL);
INSERT INTO simnet_deals VALUES(1000001,'{"PieceCID":{"/":"baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq"},"PieceSize":2048,"VerifiedDeal":true,"Client":"f1client","Provider":"f01000","Label":"x","StartEpoch":100,"EndEpoch":2000,"StoragePricePerEpoch":"0","ProviderCollateral":"0","ClientCollateral":"0"}',42);
INSERT INTO simnet_deals VALUES(1000002,'{"PieceCID":{"/":"baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq"},"PieceSize":2048,"VerifiedDeal":true,"Client":"f1client","Provider":"f01000","Label":"x","StartEpoch":100,"EndEpoch":2000,"StoragePricePerEpoch":"0","ProviderCollateral":"0","ClientCollateral":"0"}',43);
COMMIT;
