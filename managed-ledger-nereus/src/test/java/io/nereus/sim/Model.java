package io.nereus.sim;

import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.StreamId;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

/** The model of one stream: what was acknowledged to the caller and what reads have shown. */
final class Model {
    final String name;
    final int index;
    StreamId id;
    final TreeMap<Long, byte[]> acked = new TreeMap<>();
    final HashMap<Long, byte[]> seen = new HashMap<>();
    final HashMap<String, byte[]> submitted = new HashMap<>();
    long ackedEnd;
    long seenEnd;
    long seenTrim;
    long trim;
    long cursorMarkDelete;
    /** The highest compacted horizon seen published; the stored one may never be lower. */
    long horizon;
    List<OffsetRange> cursorRanges = new ArrayList<>();
    private long sequence;

    Model(String name, int index) {
        this.name = name;
        this.index = index;
    }

    byte[] newPayload(Random random, boolean zombie) {
        String tag = (zombie ? "Z" : "P") + (sequence++);
        byte[] head = (tag + "|").getBytes(StandardCharsets.US_ASCII);
        byte[] payload = Arrays.copyOf(head, head.length + random.nextInt(48));
        for (int i = head.length; i < payload.length; i++) {
            payload[i] = (byte) random.nextInt(256);
        }
        submitted.put(tag, payload);
        return payload;
    }

    /** Offset {@code offset} holds {@code payload}: it must be what was submitted and never change. */
    void observe(Simulation sim, long offset, byte[] payload) {
        byte[] acknowledged = acked.get(offset);
        if (acknowledged != null && !Arrays.equals(acknowledged, payload)) {
            sim.fail(name + " offset " + offset + " acknowledged with " + tag(acknowledged) + " reads "
                    + tag(payload));
        }
        byte[] before = seen.putIfAbsent(offset, payload);
        if (before != null && !Arrays.equals(before, payload)) {
            sim.fail(name + " offset " + offset + " resolved to two payloads: " + tag(before) + " and "
                    + tag(payload));
        }
        String tag = tag(payload);
        byte[] sent = submitted.get(tag);
        if (sent == null || !Arrays.equals(sent, payload)) {
            sim.fail(name + " offset " + offset + " holds a payload never submitted (" + tag + ")");
        }
        if (tag.startsWith("Z")) {
            sim.fail(name + " offset " + offset + " holds a fenced writer's payload " + tag);
        }
    }

    static String tag(byte[] payload) {
        int bar = 0;
        while (bar < payload.length && payload[bar] != '|') {
            bar++;
        }
        return new String(payload, 0, bar, StandardCharsets.US_ASCII);
    }
}
