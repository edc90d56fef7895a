// bidel.hpp: the Bidel bot protocol for C++17, header-only, standard library only.
//
// The referee writes one JSON object per line to the bot's stdin; the bot answers `ready` to
// `hello` and `action` (with the same `id`) to every `act`, one line each, on stdout. Nothing
// else may go to stdout: log to std::cerr. See docs/protocol.md.
//
// You should not need to edit this file: write your strategy in main.cpp.
//
//   class MyBot : public bidel::Bot { ... };         // override pass, play, trump, moon
//   int main() { MyBot bot; return bidel::run(bot); }
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bidel {

// ---------------------------------------------------------------------------------------------
// JSON: a small value type, a strict parser and an escaping writer.
// ---------------------------------------------------------------------------------------------
namespace json {

struct ParseError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Value {
public:
    enum class Type { Null, Bool, Number, String, Array, Object };
    using Array = std::vector<Value>;
    using Object = std::vector<std::pair<std::string, Value>>;  // in the order received

    Value() = default;
    static Value boolean(bool b) { Value v; v.type_ = Type::Bool; v.bool_ = b; return v; }
    static Value number(double d, std::string text) {
        Value v; v.type_ = Type::Number; v.number_ = d; v.text_ = std::move(text); return v;
    }
    static Value string(std::string s) { Value v; v.type_ = Type::String; v.text_ = std::move(s); return v; }
    static Value array(Array a = {}) { Value v; v.type_ = Type::Array; v.array_ = std::move(a); return v; }
    static Value object(Object o = {}) { Value v; v.type_ = Type::Object; v.object_ = std::move(o); return v; }

    Type type() const { return type_; }
    bool is_null() const { return type_ == Type::Null; }
    bool is_bool() const { return type_ == Type::Bool; }
    bool is_number() const { return type_ == Type::Number; }
    bool is_string() const { return type_ == Type::String; }
    bool is_array() const { return type_ == Type::Array; }
    bool is_object() const { return type_ == Type::Object; }
    // An integer written as one (no fraction, no exponent): what an `id` or a seat is.
    bool is_integer() const {
        return is_number() && text_.find_first_of(".eE") == std::string::npos;
    }

    // Accessors: the value, or `fallback` when the type is not the one asked for.
    bool as_bool(bool fallback = false) const { return is_bool() ? bool_ : fallback; }
    double as_double(double fallback = 0) const { return is_number() ? number_ : fallback; }
    long long as_int(long long fallback = 0) const {
        if (is_integer()) {
            errno = 0;
            long long n = std::strtoll(text_.c_str(), nullptr, 10);
            if (errno == 0) return n;
        }
        if (is_number() && number_ >= -9.2e18 && number_ <= 9.2e18) return (long long)number_;
        return fallback;
    }
    std::uint64_t as_uint64(std::uint64_t fallback = 0) const {  // seeds are 64-bit unsigned
        if (is_integer() && text_[0] != '-') {
            errno = 0;
            unsigned long long n = std::strtoull(text_.c_str(), nullptr, 10);
            if (errno == 0) return n;
        }
        return is_number() ? (std::uint64_t)as_int((long long)fallback) : fallback;
    }
    const std::string& as_string() const { static const std::string empty; return is_string() ? text_ : empty; }
    std::string as_string(const std::string& fallback) const { return is_string() ? text_ : fallback; }
    const Array& items() const { static const Array none; return is_array() ? array_ : none; }
    const Object& members() const { static const Object none; return is_object() ? object_ : none; }

    // obj["key"] and arr[i]: a null value when absent (never throws).
    const Value& operator[](const std::string& key) const {
        for (const auto& member : members())
            if (member.first == key) return member.second;
        return null_value();
    }
    const Value& operator[](const char* key) const { return (*this)[std::string(key)]; }
    const Value& operator[](std::size_t index) const {
        return index < items().size() ? array_[index] : null_value();
    }
    const Value& operator[](int index) const {
        return index >= 0 ? (*this)[std::size_t(index)] : null_value();
    }
    bool has(const std::string& key) const {
        for (const auto& member : members())
            if (member.first == key) return true;
        return false;
    }
    std::size_t size() const { return is_array() ? array_.size() : is_object() ? object_.size() : 0; }

    std::string dump() const;  // compact JSON text

private:
    static const Value& null_value() { static const Value null; return null; }
    Type type_ = Type::Null;
    bool bool_ = false;
    double number_ = 0;
    std::string text_;  // a string's text, or a number as written
    Array array_;
    Object object_;
};

// Appends `code` (a Unicode scalar value) to `out` as UTF-8.
inline void append_utf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
        out += char(code);
    } else if (code < 0x800) {
        out += char(0xC0 | (code >> 6));
        out += char(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += char(0xE0 | (code >> 12));
        out += char(0x80 | ((code >> 6) & 0x3F));
        out += char(0x80 | (code & 0x3F));
    } else {
        out += char(0xF0 | (code >> 18));
        out += char(0x80 | ((code >> 12) & 0x3F));
        out += char(0x80 | ((code >> 6) & 0x3F));
        out += char(0x80 | (code & 0x3F));
    }
}

class Parser {
public:
    static constexpr int max_depth = 64;  // the protocol sends at most 16; this guards the stack

    explicit Parser(const std::string& text) : s_(text) {}

    Value parse_document() {
        Value v = parse_value(0);
        skip_space();
        if (pos_ != s_.size()) fail("unexpected text after the value");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw ParseError(what + " at byte " + std::to_string(pos_));
    }
    void skip_space() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
            ++pos_;
    }
    bool eat(char c) {
        if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
        return false;
    }
    void expect_word(const char* word) {
        for (const char* p = word; *p; ++p)
            if (!eat(*p)) fail(std::string("expected '") + word + "'");
    }

    Value parse_value(int depth) {
        skip_space();
        if (pos_ >= s_.size()) fail("unexpected end of input");
        char c = s_[pos_];
        switch (c) {
            case '{': return parse_object(depth + 1);
            case '[': return parse_array(depth + 1);
            case '"': return Value::string(parse_string());
            case 't': expect_word("true"); return Value::boolean(true);
            case 'f': expect_word("false"); return Value::boolean(false);
            case 'n': expect_word("null"); return Value();
            default:
                if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
                fail(std::string("unexpected character '") + c + "'");
        }
    }

    Value parse_object(int depth) {
        if (depth > max_depth) fail("nested too deep");
        ++pos_;  // '{'
        Value::Object members;
        skip_space();
        if (eat('}')) return Value::object(std::move(members));
        for (;;) {
            skip_space();
            if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a key");
            std::string key = parse_string();
            skip_space();
            if (!eat(':')) fail("expected ':'");
            members.emplace_back(std::move(key), parse_value(depth));
            skip_space();
            if (eat('}')) return Value::object(std::move(members));
            if (!eat(',')) fail("expected ',' or '}'");
        }
    }

    Value parse_array(int depth) {
        if (depth > max_depth) fail("nested too deep");
        ++pos_;  // '['
        Value::Array items;
        skip_space();
        if (eat(']')) return Value::array(std::move(items));
        for (;;) {
            items.push_back(parse_value(depth));
            skip_space();
            if (eat(']')) return Value::array(std::move(items));
            if (!eat(',')) fail("expected ',' or ']'");
        }
    }

    Value parse_number() {
        std::size_t start = pos_;
        eat('-');
        if (eat('0')) {
        } else if (digits() == 0) {
            fail("bad number");
        }
        if (eat('.') && digits() == 0) fail("bad number: digits expected after '.'");
        if (eat('e') || eat('E')) {
            if (!eat('+')) eat('-');
            if (digits() == 0) fail("bad number: digits expected in the exponent");
        }
        std::string text = s_.substr(start, pos_ - start);
        double d = std::strtod(text.c_str(), nullptr);
        return Value::number(d, std::move(text));
    }
    std::size_t digits() {
        std::size_t start = pos_;
        while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
        return pos_ - start;
    }

    std::uint32_t hex4() {
        if (pos_ + 4 > s_.size()) fail("bad \\u escape");
        std::uint32_t code = 0;
        for (int i = 0; i < 4; ++i) {
            char c = s_[pos_++];
            code <<= 4;
            if (c >= '0' && c <= '9') code |= std::uint32_t(c - '0');
            else if (c >= 'a' && c <= 'f') code |= std::uint32_t(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') code |= std::uint32_t(c - 'A' + 10);
            else fail("bad \\u escape");
        }
        return code;
    }

    std::string parse_string() {
        ++pos_;  // opening quote
        std::string out;
        for (;;) {
            if (pos_ >= s_.size()) fail("unterminated string");
            char c = s_[pos_++];
            if (c == '"') return out;
            if ((unsigned char)c < 0x20) fail("control character in a string");
            if (c != '\\') { out += c; continue; }
            if (pos_ >= s_.size()) fail("unterminated string");
            char e = s_[pos_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    std::uint32_t code = hex4();
                    if (code >= 0xD800 && code <= 0xDBFF && pos_ + 1 < s_.size() && s_[pos_] == '\\' &&
                        s_[pos_ + 1] == 'u') {
                        std::size_t mark = pos_;
                        pos_ += 2;
                        std::uint32_t low = hex4();
                        if (low >= 0xDC00 && low <= 0xDFFF) {
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                        } else {
                            pos_ = mark;  // not a pair: the second escape stands on its own
                        }
                    }
                    if (code >= 0xD800 && code <= 0xDFFF) code = 0xFFFD;  // a lone surrogate
                    append_utf8(out, code);
                    break;
                }
                default: fail(std::string("bad escape '\\") + e + "'");
            }
        }
    }

    const std::string& s_;
    std::size_t pos_ = 0;
};

inline Value parse(const std::string& text) { return Parser(text).parse_document(); }

// `text` as a JSON string literal, quotes included. Invalid UTF-8 becomes U+FFFD, so that what
// the bot writes is always valid (the referee refuses anything else).
inline std::string quote(const std::string& text) {
    std::string out = "\"";
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    std::size_t n = text.size(), i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            switch (c) {
                case '"': out += "\\\""; break;
                case '\\': out += "\\\\"; break;
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                case '\b': out += "\\b"; break;
                case '\f': out += "\\f"; break;
                default:
                    if (c < 0x20 || c == 0x7F) {
                        char buf[8];
                        std::snprintf(buf, sizeof buf, "\\u%04x", c);
                        out += buf;
                    } else {
                        out += char(c);
                    }
            }
            ++i;
            continue;
        }
        // A multi-byte sequence: copy it if it is valid UTF-8 (no overlong forms, no surrogates).
        std::size_t len = c >= 0xF8 ? 0 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
        std::uint32_t code = len == 4 ? c & 0x07 : len == 3 ? c & 0x0F : c & 0x1F;
        bool ok = len != 0 && i + len <= n;
        for (std::size_t k = 1; ok && k < len; ++k) {
            ok = (p[i + k] & 0xC0) == 0x80;
            code = (code << 6) | (p[i + k] & 0x3F);
        }
        if (ok) {
            std::uint32_t least = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
            ok = code >= least && code <= 0x10FFFF && !(code >= 0xD800 && code <= 0xDFFF);
        }
        if (ok) {
            out.append(text, i, len);
            i += len;
        } else {
            out += "\\ufffd";
            ++i;
        }
    }
    out += '"';
    return out;
}

inline std::string Value::dump() const {
    switch (type_) {
        case Type::Null: return "null";
        case Type::Bool: return bool_ ? "true" : "false";
        case Type::Number: return text_.empty() ? std::to_string(number_) : text_;
        case Type::String: return quote(text_);
        case Type::Array: {
            std::string out = "[";
            for (std::size_t i = 0; i < array_.size(); ++i) out += (i ? "," : "") + array_[i].dump();
            return out + "]";
        }
        case Type::Object: {
            std::string out = "{";
            for (std::size_t i = 0; i < object_.size(); ++i)
                out += (i ? "," : "") + quote(object_[i].first) + ":" + object_[i].second.dump();
            return out + "}";
        }
    }
    return "null";
}

}  // namespace json

// ---------------------------------------------------------------------------------------------
// What the bot sees.
// ---------------------------------------------------------------------------------------------

// A card is its two-character text: rank "23456789TJQKA" then suit "CDHS" ("2C", "TD", "AS").
using Card = std::string;

// The rules resolved, from `hello`'s `settings` (the fields a bot usually needs, and all of
// them as JSON in `raw`, e.g. settings.raw["heart_points"], settings.raw["pass_cycle"]).
struct Settings {
    std::string preset;     // "standard", "hokm_40", ...
    int players = 4;
    int pass_count = 3;
    int hand_size = 13;
    int deck_size = 52;
    int moon_amount = 26;   // what shooting the moon adds (or subtracts)
    bool hokm = false;      // the hakem declares a trump suit
    json::Value raw;        // the whole `settings` object (null if the referee sent none)
};

struct Play {
    int seat = 0;
    Card card;
};

struct Trick {
    int leader = 0;
    std::vector<Play> plays;
    std::optional<int> winner;  // none when Cancellation cancelled everything
};

// One seat's view of the game at a decision (or at the end of a hand or game).
struct View {
    int seat = 0;
    json::Value rules;                  // the rules spec: a preset name (string) or an object
    Settings settings;                  // the same rules resolved (from `hello`)
    std::vector<Card> hand;             // sorted
    std::vector<std::string> legal;     // cards, or suits "C" "D" "H" "S", or "add" "subtract"
    std::string decision;               // "pass", "play", "trump", "moon", or "none"
    int count = 0;                      // for "pass": how many cards to pass
    std::vector<Play> trick;            // the current trick, in play order
    std::optional<int> leader;          // who leads the current trick (none outside play)
    std::vector<Trick> tricks;          // this hand's completed tricks
    std::vector<int> points_taken;      // card points taken this hand, per seat
    std::vector<int> totals;            // game totals before this hand, per seat
    std::string pass_direction;         // "left", "right", "across" or "hold"
    int pass_offset = 0;                // passed cards go to seat (seat + pass_offset) % players
    std::vector<Card> passed, received;
    bool hearts_broken = false;
    std::optional<std::string> trump;   // Hokm: the trump suit once declared
    std::optional<int> hakem;           // Hokm: the hakem's seat
    int hand_number = 0;                // 0-based
    std::vector<int> cards_left;        // cards each seat still holds
    int kitty_size = 0;
    std::optional<int> kitty_taker;
    std::vector<Card> kitty;            // shown once the hand is over
    std::optional<std::vector<int>> scores;  // at a hand's end: what it added to each total
    std::optional<double> time_left;    // seconds this move may take, or none
    json::Value raw;                    // the whole view, for fields added later

    int players() const { return settings.players; }
};

// What `hello` told the bot.
struct Hello {
    int seat = 0;
    std::uint64_t seed = 0;  // for the bot's RNG: the same seed, the same game
    json::Value rules;
    Settings settings;
};

// ---------------------------------------------------------------------------------------------
// The bot: subclass it.
// ---------------------------------------------------------------------------------------------
class Bot {
public:
    virtual ~Bot() = default;

    // Shown in tables and logs (at most 64 characters).
    virtual std::string name() const { return "cpp-bot"; }
    // The `count` cards to give away, from view.hand.
    virtual std::vector<Card> pass(const View& view, int count) = 0;
    // The card to play: one of view.legal.
    virtual Card play(const View& view) = 0;
    // Hokm, when this bot is the hakem: the trump suit, one of "C" "D" "H" "S".
    virtual std::string trump(const View& view) = 0;
    // After shooting the moon where the rules let the shooter choose: "add" or "subtract".
    virtual std::string moon(const View& view) = 0;

    // Optional hooks.
    virtual void start(const Hello&) {}      // after `hello`, before `ready` (start-up is free)
    virtual void hand_end(const View&) {}    // view.scores: what the hand added
    virtual void game_end(const View&) {}

    // Seeded from `hello`: use it (not std::random_device) and a re-run gives the same game.
    std::mt19937_64 rng;
};

// ---------------------------------------------------------------------------------------------
// The protocol loop.
// ---------------------------------------------------------------------------------------------
namespace detail {

inline std::vector<std::string> strings(const json::Value& v) {
    std::vector<std::string> out;
    for (const auto& item : v.items()) out.push_back(item.as_string());
    return out;
}

inline std::vector<int> ints(const json::Value& v) {
    std::vector<int> out;
    for (const auto& item : v.items()) out.push_back(int(item.as_int()));
    return out;
}

inline std::optional<int> optional_int(const json::Value& v) {
    if (v.is_number()) return int(v.as_int());
    return std::nullopt;
}

inline std::vector<Play> plays(const json::Value& v) {
    std::vector<Play> out;
    for (const auto& pair : v.items()) out.push_back({int(pair[0].as_int()), pair[1].as_string()});
    return out;
}

inline Settings settings_of(const json::Value& s) {
    Settings out;
    out.preset = s["preset"].as_string("");
    out.players = int(s["players"].as_int(out.players));
    out.pass_count = int(s["pass_count"].as_int(out.pass_count));
    out.hand_size = int(s["hand_size"].as_int(out.hand_size));
    out.deck_size = int(s["deck_size"].as_int(out.deck_size));
    out.moon_amount = int(s["moon_amount"].as_int(out.moon_amount));
    out.hokm = s["hokm"].as_bool(out.hokm);
    out.raw = s;
    return out;
}

// A view from its JSON form: missing or mistyped fields keep their defaults.
inline View view_of(const json::Value& v, const Settings& settings) {
    View out;
    out.seat = int(v["seat"].as_int());
    out.rules = v["rules"];
    out.settings = settings;
    out.hand = strings(v["hand"]);
    out.legal = strings(v["legal"]);
    out.decision = v["decision"].as_string("none");
    out.trick = plays(v["trick"]);
    out.leader = optional_int(v["leader"]);
    for (const auto& t : v["tricks"].items())
        out.tricks.push_back({int(t["leader"].as_int()), plays(t["plays"]), optional_int(t["winner"])});
    out.points_taken = ints(v["points_taken"]);
    out.totals = ints(v["totals"]);
    out.pass_direction = v["pass_direction"].as_string("");
    out.pass_offset = int(v["pass_offset"].as_int());
    out.passed = strings(v["passed"]);
    out.received = strings(v["received"]);
    out.hearts_broken = v["hearts_broken"].as_bool();
    if (v["trump"].is_string()) out.trump = v["trump"].as_string();
    out.hakem = optional_int(v["hakem"]);
    out.hand_number = int(v["hand_number"].as_int());
    out.cards_left = ints(v["cards_left"]);
    out.kitty_size = int(v["kitty_size"].as_int());
    out.kitty_taker = optional_int(v["kitty_taker"]);
    out.kitty = strings(v["kitty"]);
    if (v["scores"].is_array()) out.scores = ints(v["scores"]);
    if (v["time_left"].is_number()) out.time_left = v["time_left"].as_double();
    out.raw = v;
    return out;
}

inline void send(std::ostream& out, const std::string& line) {
    out << line << '\n';
    out.flush();
}

inline std::string shorten(std::string text, std::size_t limit) {
    if (text.size() > limit) text.resize(limit);  // (a cut UTF-8 sequence becomes U+FFFD)
    return text;
}

}  // namespace detail

// Runs `bot` over the protocol until `bye` or the end of input: returns 0 then, or 1 after
// reporting an error (the bot's code threw). Use it as main's return value.
inline int run(Bot& bot, std::istream& in = std::cin, std::ostream& out = std::cout) {
    Settings settings;
    std::string line;
    const char* where = "start-up";
    try {
        while (std::getline(in, line)) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line.find_first_not_of(" \t") == std::string::npos) continue;
            json::Value message;
            try {
                message = json::parse(line);
            } catch (const json::ParseError& e) {
                std::cerr << "bidel: ignored a line that is not JSON (" << e.what() << ")\n";
                continue;
            }
            const std::string& type = message["type"].as_string();
            if (type == "hello") {
                where = "start";
                Hello hello;
                hello.seat = int(message["seat"].as_int());
                hello.seed = message["seed"].as_uint64();
                hello.rules = message["rules"];
                hello.settings = settings = detail::settings_of(message["settings"]);
                bot.rng.seed(hello.seed);
                bot.start(hello);
                where = "name";
                detail::send(out, "{\"type\":\"ready\",\"name\":" + json::quote(bot.name()) + "}");
            } else if (type == "act") {
                const json::Value& id = message["id"];
                if (!id.is_integer()) {
                    std::cerr << "bidel: ignored an act without an integer id\n";
                    continue;
                }
                View view = detail::view_of(message["view"], settings);
                std::string decision = message["decision"].as_string(view.decision);
                view.decision = decision;
                std::string action;
                if (decision == "pass") {
                    where = "pass";
                    view.count = int(message["count"].as_int(settings.pass_count));
                    action = "[";
                    for (const Card& card : bot.pass(view, view.count))
                        action += (action.size() > 1 ? "," : "") + json::quote(card);
                    action += "]";
                } else if (decision == "play") {
                    where = "play";
                    action = json::quote(bot.play(view));
                } else if (decision == "trump") {
                    where = "trump";
                    action = json::quote(bot.trump(view));
                } else if (decision == "moon") {
                    where = "moon";
                    action = json::quote(bot.moon(view));
                } else {
                    std::cerr << "bidel: unknown decision '" << decision << "': answering the first legal action\n";
                    action = json::quote(view.legal.empty() ? std::string() : view.legal.front());
                }
                detail::send(out, "{\"type\":\"action\",\"id\":" + std::to_string(id.as_int()) + ",\"action\":" + action + "}");
            } else if (type == "hand_end") {
                where = "hand_end";
                bot.hand_end(detail::view_of(message["view"], settings));
            } else if (type == "game_end") {
                where = "game_end";
                bot.game_end(detail::view_of(message["view"], settings));
            } else if (type == "bye") {
                return 0;
            }  // any other type: ignored (the protocol grows)
        }
        return 0;
    } catch (const std::bad_alloc&) {
        detail::send(out, "{\"type\":\"error\",\"class\":\"memory\",\"detail\":" +
                      json::quote(std::string("out of memory in ") + where) + "}");
    } catch (const std::exception& e) {
        std::cerr << "bidel: the bot threw in " << where << ": " << e.what() << "\n";
        detail::send(out, "{\"type\":\"error\",\"class\":\"crash\",\"detail\":" +
                      json::quote(detail::shorten(std::string("in ") + where + ": " + e.what(), 500)) + "}");
    } catch (...) {
        std::cerr << "bidel: the bot threw in " << where << "\n";
        detail::send(out, "{\"type\":\"error\",\"class\":\"crash\",\"detail\":" +
                      json::quote(std::string("in ") + where + ": an exception") + "}");
    }
    return 1;
}

}  // namespace bidel
