package io.nereus.pulsar.ledger;

import io.nereus.pulsar.cursor.CursorHost;
import io.nereus.pulsar.cursor.NereusManagedCursor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cursors of one open ledger, durable and non-durable, by name: at most one cursor per name, one open of a
 * durable cursor in flight per name (concurrent opens share it). Thread-safe; iteration sees a snapshot.
 */
final class LedgerCursors {
    private static final Logger LOG = LoggerFactory.getLogger(LedgerCursors.class);

    private final CursorHost host;
    private final Map<String, NereusManagedCursor> open = new ConcurrentHashMap<>();
    private final Map<String, CompletableFuture<NereusManagedCursor>> opening = new ConcurrentHashMap<>();

    LedgerCursors(CursorHost host) {
        this.host = host;
    }

    /** Opens every stored durable cursor (at its stored position); called once when the ledger opens. */
    CompletableFuture<Void> loadStored(List<String> names) {
        List<CompletableFuture<NereusManagedCursor>> opens = new ArrayList<>();
        for (String name : names) {
            opens.add(openDurable(name, InitialPosition.Latest, Map.of(), Map.of()));
        }
        return CompletableFuture.allOf(opens.toArray(CompletableFuture[]::new));
    }

    /**
     * The durable cursor {@code name}: the open one, or loaded from storage, or created at {@code initial}. The
     * check for an open cursor and the registration of an open in flight happen under this object's monitor,
     * as does the hand-over from "opening" to "open", so two concurrent opens never load two cursor objects
     * for one name (the second would take acknowledgements the first never sees).
     */
    CompletableFuture<NereusManagedCursor> openDurable(String name, InitialPosition initial, Map<String, Long> props,
            Map<String, String> cursorProperties) {
        CompletableFuture<NereusManagedCursor> mine = new CompletableFuture<>();
        synchronized (this) {
            NereusManagedCursor existing = open.get(name);
            if (existing != null && existing.isDurable()) {
                return CompletableFuture.completedFuture(existing);
            }
            CompletableFuture<NereusManagedCursor> inFlight = opening.putIfAbsent(name, mine);
            if (inFlight != null) {
                return inFlight;
            }
        }
        NereusManagedCursor.openDurable(host, name, initial == null ? InitialPosition.Latest : initial,
                props == null ? Map.of() : props, cursorProperties == null ? Map.of() : cursorProperties)
                .whenComplete((c, t) -> {
                    synchronized (this) {
                        if (c != null) {
                            open.put(name, c);
                        }
                        opening.remove(name, mine);
                    }
                    if (t != null) {
                        mine.completeExceptionally(t);
                    } else {
                        mine.complete(c);
                    }
                });
        return mine;
    }

    /** The cursor {@code name} if one is open (like Pulsar), else a new non-durable one, active, as Pulsar's starts. */
    synchronized NereusManagedCursor nonDurable(String name, Position start, InitialPosition initial,
            boolean readCompacted) {
        NereusManagedCursor existing = open.get(name);
        if (existing != null) {
            return existing;
        }
        NereusManagedCursor c = NereusManagedCursor.nonDurable(host, name, start, initial, readCompacted);
        NereusManagedCursor raced = open.putIfAbsent(name, c);
        if (raced != null) {
            return raced;
        }
        c.setActive();
        return c;
    }

    Optional<NereusManagedCursor> remove(String name) {
        return Optional.ofNullable(open.remove(name));
    }

    /** Forgets {@code cursor} if it is still the one open under its name. */
    void closed(NereusManagedCursor cursor) {
        open.remove(cursor.getName(), cursor);
    }

    List<NereusManagedCursor> all() {
        return new ArrayList<>(open.values());
    }

    List<ManagedCursor> active() {
        List<ManagedCursor> active = new ArrayList<>();
        for (NereusManagedCursor c : open.values()) {
            if (c.isActive()) {
                active.add(c);
            }
        }
        return active;
    }

    /** The durable cursor with the lowest mark-delete, if any. */
    Optional<NereusManagedCursor> slowestDurable() {
        NereusManagedCursor slowest = null;
        for (NereusManagedCursor c : open.values()) {
            if (c.isDurable() && (slowest == null || c.markDeleteEnd() < slowest.markDeleteEnd())) {
                slowest = c;
            }
        }
        return Optional.ofNullable(slowest);
    }

    /** Closes every cursor (each flushes its state); a cursor that fails to close is logged, not fatal. */
    CompletableFuture<Void> closeAll() {
        List<CompletableFuture<Void>> closes = new ArrayList<>();
        for (NereusManagedCursor c : open.values()) {
            closes.add(c.closeAsync().exceptionally(t -> {
                LOG.warn("Cursor did not close cleanly ledger={} cursor={}", host.name(), c.getName(), t);
                return null;
            }));
        }
        return CompletableFuture.allOf(closes.toArray(CompletableFuture[]::new));
    }

    /** The ledger is gone: every cursor stops (parked reads fail with {@code why}) and is forgotten. */
    void failAll(ManagedLedgerException why) {
        for (NereusManagedCursor c : open.values()) {
            c.ledgerClosed(why);
        }
        open.clear();
    }

    Map<String, ManagedLedgerInternalStats.CursorStats> stats() {
        Map<String, ManagedLedgerInternalStats.CursorStats> stats = new HashMap<>();
        for (NereusManagedCursor c : open.values()) {
            stats.put(c.getName(), c.getCursorStats());
        }
        return stats;
    }
}
