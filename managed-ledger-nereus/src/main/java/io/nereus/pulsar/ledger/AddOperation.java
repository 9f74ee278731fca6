package io.nereus.pulsar.ledger;

import io.netty.buffer.ByteBuf;
import org.apache.bookkeeper.mledger.intercept.ManagedLedgerInterceptor;

/** The add handed to an interceptor, which may replace the data (broker entry metadata). */
final class AddOperation implements ManagedLedgerInterceptor.AddEntryOperation {
    private ByteBuf data;
    private final Object ctx;

    AddOperation(ByteBuf data, Object ctx) {
        this.data = data;
        this.ctx = ctx;
    }

    @Override
    public ByteBuf getData() {
        return data;
    }

    @Override
    public void setData(ByteBuf data) {
        this.data = data;
    }

    @Override
    public Object getCtx() {
        return ctx;
    }
}
