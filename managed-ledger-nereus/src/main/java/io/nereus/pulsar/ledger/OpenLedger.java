package io.nereus.pulsar.ledger;

import io.nereus.stream.NereusStream;
import io.nereus.stream.StreamStorage;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * A managed ledger this broker has open in Nereus, as the facade's other rooms (compaction) see it: its name, its
 * virtual ledger id (the ledger id of its positions), its stream, the storage instance that holds it and the ledger's
 * executor, on which results reach Pulsar ({@link io.nereus.pulsar.Callbacks#handOff}).
 */
public record OpenLedger(String name, long ledgerId, NereusStream stream, StreamStorage storage, Executor executor) {
    public OpenLedger {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(storage, "storage");
        Objects.requireNonNull(executor, "executor");
    }
}
