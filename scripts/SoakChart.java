import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.Stroke;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.imageio.ImageIO;

/**
 * Draws the series of one or two scripts/space-soak runs as a PNG, one panel per measurement, time in minutes on x.
 * {@code java -Djava.awt.headless=true SoakChart.java out.png run.csv [other.csv]}. With two CSVs (a Nereus run and a
 * stock one) the bookie disk of each gets its own panel, side by side on one y scale, and the other panels draw both
 * runs as lines. A CSV is space-soak's: a header naming the columns, one row per sample, {@code -} where a value was
 * not measured; the {@code storage} column names the run.
 */
public final class SoakChart {
    private static final int WIDTH = 1400;
    private static final int PANEL_HEIGHT = 240;
    private static final int MARGIN = 16;
    private static final double MIB = 1024 * 1024;
    private static final Color[] RUN_COLORS = {new Color(0x1f77b4), new Color(0xd62728)};
    private static final Color TOTAL = new Color(0x222222);
    private static final Color ENTRY_LOGS = new Color(0x2ca02c);
    private static final Color JOURNAL = new Color(0x9467bd);

    /** One run: its name and the columns of its CSV, a missing value being NaN. */
    record Run(String name, List<Double> minutes, Map<String, List<Double>> columns) {
        List<Double> column(String name) {
            List<Double> values = columns.get(name);
            if (values == null) {
                throw new IllegalArgumentException("no column " + name + " in the CSV of " + this.name);
            }
            return values;
        }
    }

    /** One line of a panel. */
    record Line(String label, Color color, Stroke stroke, List<Double> x, List<Double> y) {}

    public static void main(String[] args) throws IOException {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: SoakChart <out.png> <run.csv> [<other-run.csv>]");
            System.exit(2);
        }
        System.setProperty("java.awt.headless", "true"); // no display needed
        List<Run> runs = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            runs.add(read(Path.of(args[i])));
        }
        ImageIO.write(draw(runs), "png", Path.of(args[0]).toFile());
    }

    static Run read(Path csv) throws IOException {
        List<String> lines = Files.readAllLines(csv).stream().filter(l -> !l.isBlank()).toList();
        if (lines.size() < 2) {
            throw new IllegalArgumentException(csv + " has no samples");
        }
        String[] header = lines.get(0).split(",", -1);
        Map<String, List<Double>> columns = new LinkedHashMap<>();
        for (String h : header) {
            columns.put(h, new ArrayList<>());
        }
        String storage = null;
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.split(",", -1);
            if (cells.length != header.length) {
                throw new IllegalArgumentException(csv + ": a row of " + cells.length + " cells under a header of "
                        + header.length + ": " + line);
            }
            for (int i = 0; i < header.length; i++) {
                if (header[i].equals("storage")) {
                    storage = cells[i];
                }
                columns.get(header[i]).add(number(cells[i]));
            }
        }
        List<Double> minutes = columns.get("elapsed_s").stream().map(s -> s / 60).toList();
        return new Run(storage == null ? csv.getFileName().toString() : storage, minutes, columns);
    }

    private static double number(String cell) {
        try {
            return Double.parseDouble(cell);
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    static BufferedImage draw(List<Run> runs) {
        int rows = 5; // bookie disk (one panel per run), ledgers, objects, metadata keys, metadata directory
        int titleHeight = 36;
        BufferedImage image = new BufferedImage(WIDTH, titleHeight + rows * PANEL_HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, image.getWidth(), image.getHeight());
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        g.drawString("space-soak: " + runs.stream().map(Run::name).collect(Collectors.joining(" beside ")), MARGIN, 24);

        double xMax = runs.stream().flatMap(r -> r.minutes().stream()).mapToDouble(Double::doubleValue).max().orElse(1);
        int y = titleHeight;
        // Bookie disk: one panel per run, one y scale.
        double bookieMax = runs.stream().flatMap(r -> r.column("bookie_bytes").stream())
                .filter(v -> !v.isNaN()).mapToDouble(v -> v / MIB).max().orElse(1);
        int panelWidth = (WIDTH - MARGIN) / runs.size();
        for (int i = 0; i < runs.size(); i++) {
            Run run = runs.get(i);
            List<Line> lines = List.of(
                    line("total", TOTAL, 2.5f, run, "bookie_bytes", v -> v / MIB),
                    line("entry logs", ENTRY_LOGS, 1.8f, run, "bookie_entry_log_bytes", v -> v / MIB),
                    line("journal", JOURNAL, 1.8f, run, "bookie_journal_bytes", v -> v / MIB));
            panel(g, i * panelWidth, y, panelWidth, "Bookie disk, MiB (" + run.name() + ")", lines, xMax, bookieMax);
        }
        y += PANEL_HEIGHT;
        List<String[]> shared = List.of(
                new String[] {"ledgers", "BookKeeper ledgers", "1"},
                new String[] {"object_bytes", "Object store, MiB", "mib"},
                new String[] {"metadata_keys", "Metadata keys (Nereus census)", "1"},
                new String[] {"nereus_metadata_dir_bytes", "Nereus metadata directory, MiB", "mib"});
        for (String[] p : shared) {
            Function<Double, Double> scale = p[2].equals("mib") ? v -> v / MIB : v -> v;
            List<Line> lines = IntStream.range(0, runs.size())
                    .mapToObj(i -> line(runs.get(i).name(), RUN_COLORS[i], 2.2f, runs.get(i), p[0], scale))
                    .toList();
            panel(g, 0, y, WIDTH - MARGIN, p[1], lines, xMax, Double.NaN);
            y += PANEL_HEIGHT;
        }
        g.dispose();
        return image;
    }

    private static Line line(String label, Color color, float width, Run run, String column,
            Function<Double, Double> scale) {
        List<Double> values = run.column(column).stream().map(v -> v.isNaN() ? v : scale.apply(v)).toList();
        return new Line(label, color, new BasicStroke(width), run.minutes(), values);
    }

    /** One panel at (left, top): axes, grid, the lines and their legend. yMax NaN: from the lines. */
    private static void panel(Graphics2D g, int left, int top, int width, String title, List<Line> lines,
            double xMax, double yMax) {
        int plotLeft = left + MARGIN + 70;
        int plotTop = top + 28;
        int plotRight = left + width - MARGIN;
        int plotBottom = top + PANEL_HEIGHT - 36;
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
        g.setColor(Color.BLACK);
        g.drawString(title, plotLeft, top + 18);
        boolean any = lines.stream().anyMatch(l -> l.y().stream().anyMatch(v -> !v.isNaN()));
        if (Double.isNaN(yMax)) {
            OptionalDouble max = lines.stream().flatMap(l -> l.y().stream()).filter(v -> !v.isNaN())
                    .mapToDouble(Double::doubleValue).max();
            yMax = max.orElse(1);
        }
        if (!(yMax > 0)) {
            yMax = 1; // all zero: an axis of 0 to 1
        }
        double yStep = niceStep(Math.max(yMax, 1e-9) / 4);
        double yTop = Math.max(yStep, Math.ceil(yMax / yStep) * yStep);
        double xStep = niceStep(Math.max(xMax, 1e-9) / 8);
        double xRight = Math.max(xStep, Math.ceil(xMax / xStep) * xStep);

        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        FontMetrics fm = g.getFontMetrics();
        for (double v = 0; v <= yTop + yStep / 2; v += yStep) {
            int py = plotBottom - (int) Math.round(v / yTop * (plotBottom - plotTop));
            g.setColor(new Color(0xe6e6e6));
            g.drawLine(plotLeft, py, plotRight, py);
            g.setColor(Color.DARK_GRAY);
            String label = format(v, yStep);
            g.drawString(label, plotLeft - 6 - fm.stringWidth(label), py + fm.getAscent() / 2 - 1);
        }
        for (double v = 0; v <= xRight + xStep / 2; v += xStep) {
            int px = plotLeft + (int) Math.round(v / xRight * (plotRight - plotLeft));
            g.setColor(new Color(0xe6e6e6));
            g.drawLine(px, plotTop, px, plotBottom);
            g.setColor(Color.DARK_GRAY);
            String label = format(v, xStep);
            g.drawString(label, px - fm.stringWidth(label) / 2, plotBottom + fm.getAscent() + 4);
        }
        g.drawString("minutes", plotRight - fm.stringWidth("minutes"), plotBottom + 2 * fm.getAscent() + 8);
        g.setColor(Color.GRAY);
        g.drawRect(plotLeft, plotTop, plotRight - plotLeft, plotBottom - plotTop);
        if (!any) {
            g.setColor(Color.GRAY);
            g.drawString("not measured in this run", plotLeft + 12, plotTop + 40);
        }
        Stroke previous = g.getStroke();
        int legendX = plotLeft + 12;
        for (Line line : lines) {
            g.setColor(line.color());
            g.setStroke(line.stroke());
            int lastX = Integer.MIN_VALUE;
            int lastY = 0;
            for (int i = 0; i < line.x().size(); i++) {
                double v = line.y().get(i);
                if (Double.isNaN(v)) {
                    lastX = Integer.MIN_VALUE;
                    continue;
                }
                int px = plotLeft + (int) Math.round(line.x().get(i) / xRight * (plotRight - plotLeft));
                int py = plotBottom - (int) Math.round(v / yTop * (plotBottom - plotTop));
                if (lastX != Integer.MIN_VALUE) {
                    g.drawLine(lastX, lastY, px, py);
                }
                g.fillOval(px - 2, py - 2, 5, 5);
                lastX = px;
                lastY = py;
            }
            g.setStroke(previous);
            if (lines.size() > 1) {
                g.fillRect(legendX, plotTop + 8, 14, 4);
                g.setColor(Color.BLACK);
                g.drawString(line.label(), legendX + 18, plotTop + 14);
                legendX += 18 + fm.stringWidth(line.label()) + 16;
            }
        }
    }

    /** 1, 2 or 5 times a power of ten, at least raw. */
    static double niceStep(double raw) {
        double power = Math.pow(10, Math.floor(Math.log10(raw)));
        for (double m : new double[] {1, 2, 5, 10}) {
            if (m * power >= raw) {
                return m * power;
            }
        }
        return 10 * power;
    }

    private static String format(double v, double step) {
        if (step >= 1) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        int decimals = (int) Math.ceil(-Math.log10(step));
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    private SoakChart() {}
}
