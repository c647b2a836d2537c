-- install.created for an install_id the app already stores (a re-consent at the service, or the
-- redirect_uri that came first) in one statement too (lib/webhooks/handlers/install-created.ts;
-- contract §6). The full transaction records it and enqueues a check of the install with the API
-- (an install-check job, pg-boss) in the same transaction. Here the statement cannot enqueue: a job
-- is pg-boss's row in pg-boss's tables, and writing it from SQL would tie this function to pg-boss's
-- table layout (partitions, per-queue defaults, its clock function), which changes between its
-- versions. So the check is requested in two ways (docs/spec-gaps.md A163):
--   1. inside the statement, durably: an ACTIVE install's last_reconciled_at is set to NULL, which
--      the reconcile sweep's due query (lib/jobs/install-check.ts, findInstallsDueForCheck) reads
--      as "never checked", and takes first at its next run (every 5 minutes, lib/jobs/kinds.ts);
--   2. after the statement has committed, the receiver enqueues the same job the full transaction
--      does (lib/webhooks/receive.ts), so the check runs at once. If the process dies in between,
--      or the job engine refuses, step 1 has already made sure the check happens.
-- A copy of a delivery already recorded returns before any write, and the function returns no
-- install to check, so a duplicate enqueues nothing (and the queue keeps one waiting check per
-- install anyway: lib/jobs/queues.ts).
--
-- The function now returns the install to check beside its outcome, so it is dropped and created
-- again (a function's result type cannot be changed in place). Everything but the known install_id
-- branch is migration 20261126010000_webhook_one_statement's, unchanged.
DROP FUNCTION "webhook_install_created"(TEXT, TEXT, INTEGER, TEXT, TEXT, TEXT, TIMESTAMPTZ, JSONB, TEXT);

CREATE FUNCTION "webhook_install_created"(
    p_lock_key TEXT,
    p_dedupe_key TEXT,
    p_install_id INTEGER,
    p_client_id TEXT,
    p_operator_id TEXT,
    p_slug TEXT,
    p_delivered_at TIMESTAMPTZ,
    p_payload JSONB,
    p_sync_incident_prefix TEXT,
    OUT outcome TEXT,
    OUT check_install_row_id UUID
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    known_id UUID;
    known_operator_id TEXT;
    known_status install_status;
    live_id UUID;
    live_install_id INTEGER;
    live_status install_status;
    locked_id UUID;
    locked_install_id INTEGER;
    locked_status install_status;
    new_status install_status := 'ACTIVE';
    new_detail TEXT := 'install recorded';
    new_row_id UUID;
BEGIN
    -- A copy of a delivery already recorded: no lock taken (a flood of copies does not queue on it).
    IF EXISTS (SELECT FROM webhook_deliveries WHERE dedupe_key = p_dedupe_key) THEN
        outcome := 'duplicate';
        RETURN;
    END IF;

    -- A first read, without the lock: the states left to the full transaction answer at once.
    SELECT id, operator_id, status INTO known_id, known_operator_id, known_status FROM installs WHERE install_id = p_install_id;
    IF known_id IS NOT NULL THEN
        -- An install_id already stored (lib/installs/register.ts, recordInstall: "known"). Another
        -- operator's (a conflict the full transaction refuses) and an install flagged NEEDS_REAUTH or
        -- REINSTALL_NEEDED (its check is a re-authorization probe, throttled on last_reconciled_at,
        -- which the marker below would bypass) are the full transaction's.
        IF known_operator_id <> p_operator_id OR known_status NOT IN ('ACTIVE', 'REVOKED') THEN
            outcome := 'full';
            RETURN;
        END IF;
        INSERT INTO webhook_deliveries (id, dedupe_key, event_type, install_id, delivered_at, outcome, detail, payload)
        VALUES (gen_random_uuid(), p_dedupe_key, 'install.created', p_install_id, p_delivered_at, 'processed',
                'install ' || p_install_id || ' already known', p_payload)
        ON CONFLICT (dedupe_key) DO NOTHING;
        IF NOT FOUND THEN
            outcome := 'duplicate';
            RETURN;
        END IF;
        -- What the event teaches (the slug, when it names one), and the durable check request for an
        -- ACTIVE install (a revoked one is never checked: lib/jobs/install-check.ts). The row lock is
        -- all this needs: it changes no install's state, so it takes no operator lock; a row that
        -- moved meanwhile (revoked or flagged by a transaction this UPDATE waited for) rolls the
        -- statement back, and the full transaction decides on the state as it is now.
        UPDATE installs
        SET slug = COALESCE(NULLIF(p_slug, ''), slug),
            last_reconciled_at = CASE WHEN status = 'ACTIVE' THEN NULL ELSE last_reconciled_at END,
            updated_at = now()
        WHERE id = known_id AND status = known_status;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'install % moved while its install.created was recorded', p_install_id USING ERRCODE = 'PAF01';
        END IF;
        outcome := 'processed';
        check_install_row_id := known_id;
        RETURN;
    END IF;

    SELECT id, install_id, status INTO live_id, live_install_id, live_status FROM installs
    WHERE client_id = p_client_id AND operator_id = p_operator_id AND status IN ('ACTIVE', 'NEEDS_REAUTH', 'REINSTALL_NEEDED');
    IF live_id IS NOT NULL AND (
        live_install_id IS NULL
        OR (live_install_id < p_install_id AND (
            live_status <> 'ACTIVE'
            OR EXISTS (SELECT FROM alert_incidents WHERE key = p_sync_incident_prefix || live_id AND open)))) THEN
        outcome := 'full';
        RETURN;
    END IF;

    -- The delivery first (the full transaction's order), then the operator's lock.
    INSERT INTO webhook_deliveries (id, dedupe_key, event_type, install_id, delivered_at, outcome, detail, payload)
    VALUES (gen_random_uuid(), p_dedupe_key, 'install.created', p_install_id, p_delivered_at, 'processed',
            'install ' || p_install_id || ' recorded', p_payload)
    ON CONFLICT (dedupe_key) DO NOTHING;
    IF NOT FOUND THEN
        outcome := 'duplicate';
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext(p_lock_key));

    -- Under the lock every other writer of this operator's installs has committed: read again, and
    -- leave anything that moved since the first read to the full transaction.
    SELECT id, install_id, status INTO locked_id, locked_install_id, locked_status FROM installs
    WHERE client_id = p_client_id AND operator_id = p_operator_id AND status IN ('ACTIVE', 'NEEDS_REAUTH', 'REINSTALL_NEEDED');
    IF EXISTS (SELECT FROM installs WHERE install_id = p_install_id)
       OR locked_id IS DISTINCT FROM live_id
       OR locked_install_id IS DISTINCT FROM live_install_id
       OR locked_status IS DISTINCT FROM live_status THEN
        RAISE EXCEPTION 'the installs of operator % moved while install % was recorded', p_operator_id, p_install_id USING ERRCODE = 'PAF01';
    END IF;

    IF live_id IS NOT NULL AND live_install_id > p_install_id THEN
        -- install_ids increase (docs/spec-gaps.md A3): a late event about an older install is history.
        new_status := 'REVOKED';
        new_detail := 'older than live install ' || live_install_id;
    ELSIF live_id IS NOT NULL THEN
        -- A re-install: only the newer install can be active at the service (contract §2).
        UPDATE installs SET status = 'REVOKED', status_changed_at = now(), revoked_at = now(), updated_at = now()
        WHERE id = live_id AND status = 'ACTIVE';
        IF NOT FOUND
           OR EXISTS (SELECT FROM alert_incidents WHERE key = p_sync_incident_prefix || live_id AND open) THEN
            RAISE EXCEPTION 'install % moved while its successor % was recorded', live_install_id, p_install_id USING ERRCODE = 'PAF01';
        END IF;
        DELETE FROM token_grants WHERE install_row_id = live_id;
        INSERT INTO install_events (id, install_row_id, from_status, to_status, cause, detail)
        VALUES (gen_random_uuid(), live_id, 'ACTIVE', 'REVOKED', 'webhook', 'superseded by install ' || p_install_id);
    END IF;

    INSERT INTO installs (id, install_id, client_id, operator_id, slug, granted_scopes, status, revoked_at, updated_at)
    VALUES (gen_random_uuid(), p_install_id, p_client_id, p_operator_id, p_slug, '{}', new_status,
            CASE WHEN new_status = 'REVOKED' THEN now() END, now())
    RETURNING id INTO new_row_id;
    INSERT INTO install_events (id, install_row_id, from_status, to_status, cause, detail)
    VALUES (gen_random_uuid(), new_row_id, NULL, new_status, 'webhook', new_detail);
    outcome := 'processed';
END
$$;
