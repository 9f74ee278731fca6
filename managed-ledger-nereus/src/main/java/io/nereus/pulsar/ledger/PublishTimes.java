package io.nereus.pulsar.ledger;

import io.netty.buffer.ByteBuf;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.protocol.Commands;

/** Reads the publish time Pulsar's producer wrote into an entry's message metadata. */
final class PublishTimes {
    private PublishTimes() {
    }

    /** The publish time (ms since the epoch) of the message or batch in {@code entry}; the entry is not consumed. */
    static long of(Entry entry) {
        ByteBuf data = entry.getDataBuffer().duplicate();
        Commands.skipBrokerEntryMetadataIfExist(data);
        MessageMetadata md = new MessageMetadata();
        Commands.parseMessageMetadata(data, md);
        return md.getPublishTime();
    }
}
