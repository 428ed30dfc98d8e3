-- The database every durability test loads: caio, and a table protected by
-- it whose rows name the worker (resource 'dur:' || worker) and a nonce.
CREATE EXTENSION caio;
CREATE TABLE ledger (
    id           bigserial PRIMARY KEY,
    worker       text   NOT NULL,
    nonce        bigint NOT NULL,
    fence_token  bigint
);
SELECT caio_protect('ledger', 'fence_token', 'worker', 'dur:');
