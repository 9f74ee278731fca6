package io.nereus.pulsar.ledger;

import io.nereus.stream.NereusStream;
import io.nereus.stream.StreamStorage;
import java.util.Objects;

/**
 * A managed ledger this broker has open in Nereus, as the facade's other rooms (compaction) see it: its name, its
 * virtual ledger id (the ledger id of its positions), its stream and the storage instance that holds it.
 */
public record OpenLedger(String name, long ledgerId, NereusStream stream, StreamStorage storage) {
    public OpenLedger {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(storage, "storage");
    }
}
