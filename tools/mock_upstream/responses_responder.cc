#include "responses_responder.h"

#include <span>

#include <boost/json.hpp>

#include "json_text.h"
#include "request_body.h"

namespace sluice::mock {
namespace {

namespace json = boost::json;

constexpr std::string_view kCallId = "call_mock_1";

std::optional<std::string_view> first_function(const json::object& root) {
  if (const auto* tools = array_member(root, "tools")) {
    for (const auto& tool : *tools) {
      const auto* obj = tool.if_object();
      const auto* type = obj ? string_member(*obj, "type") : nullptr;
      if (type && *type == "function") {
        return name_member(tool).value_or("tool");
      }
    }
  }
  return std::nullopt;
}

// The conversation ends with a tool result: the last input item is a function_call_output
// (or another *_call_output: custom tools, computer use, ...).
bool ends_with_tool_result(const json::object& root) {
  const auto* input = array_member(root, "input");
  const auto* last = input && !input->empty() ? input->back().if_object() : nullptr;
  const auto* type = last ? string_member(*last, "type") : nullptr;
  return type && type->size() >= 12 &&
         std::string_view(*type).substr(type->size() - 12) == "_call_output";
}

std::optional<std::string> pick_tool(const json::object& root) {
  ToolChoice choice;
  if (const auto* c = root.if_contains("tool_choice")) {
    choice.forbidden = c->is_string() && c->get_string() == "none";
    choice.required = c->is_string() && c->get_string() == "required";
    choice.forced = name_member(*c);
  }
  return choose_tool(first_function(root), choice, ends_with_tool_result(root));
}

// Characters of one input item: its string content or content parts' text, and the
// output of a function_call_output item.
std::size_t item_chars(const json::value& item) {
  const auto* obj = item.if_object();
  if (!obj) {
    return 0;
  }
  std::size_t n = 0;
  if (const auto* content = obj->if_contains("content")) {
    n += text_chars(*content);
  }
  if (const auto* output = string_member(*obj, "output")) {
    n += output->size();
  }
  return n;
}

// The JSON text of obj[key], or `fallback` when it is absent or null.
std::string echo(const json::object& obj, std::string_view key, std::string_view fallback) {
  const auto* v = obj.if_contains(key);
  return v && !v->is_null() ? json::serialize(*v) : std::string(fallback);
}

Result<ResponsesRequest> read_responses_request(const json::object& obj,
                                                const ResponseStore& store) {
  ResponsesRequest out;
  auto model = read_model(obj);
  if (!model) {
    return model.error();
  }
  out.model = std::move(*model);

  std::size_t chars = 0;
  if (const auto* input = obj.if_contains("input")) {
    if (const auto* s = input->if_string()) {
      chars += s->size();
    } else if (const auto* items = input->if_array()) {
      for (const auto& item : *items) {
        chars += item_chars(item);
      }
    } else {
      return bad_request("Invalid type for 'input': expected a string or an array of input items.",
                         "input");
    }
  }
  if (const auto* instructions = string_member(obj, "instructions")) {
    chars += instructions->size();
  }
  out.input_tokens = estimate_tokens(chars);

  if (const auto* previous = obj.if_contains("previous_response_id");
      previous && !previous->is_null()) {
    const auto* id = previous->if_string();
    if (!id || !store.contains(*id)) {
      std::string shown = id ? std::string(*id) : json::serialize(*previous);
      return std::move(bad_request("Previous response with id '" + shown + "' not found.",
                                   "previous_response_id")
                           .with_code("previous_response_not_found"));
    }
  }
  if (const auto* stream = obj.if_contains("stream"); stream && stream->is_bool()) {
    out.stream = stream->get_bool();
  }
  if (const auto* store_flag = obj.if_contains("store"); store_flag && store_flag->is_bool()) {
    out.store = store_flag->get_bool();
  }
  out.tool_name = pick_tool(obj);
  out.instructions = echo(obj, "instructions", out.instructions);
  out.max_output_tokens = echo(obj, "max_output_tokens", out.max_output_tokens);
  out.metadata = echo(obj, "metadata", out.metadata);
  out.previous_response_id = echo(obj, "previous_response_id", out.previous_response_id);
  out.temperature = echo(obj, "temperature", out.temperature);
  out.tool_choice = echo(obj, "tool_choice", out.tool_choice);
  out.tools = echo(obj, "tools", out.tools);
  out.top_p = echo(obj, "top_p", out.top_p);
  return out;
}

// Where an output item is in its life: as response.output_item.added shows it, or done.
enum class Phase : std::uint8_t { kInProgress, kCompleted };

std::string_view status_of(Phase phase) {
  return phase == Phase::kCompleted ? "completed" : "in_progress";
}

void append_item_id(std::string& out, const ResponsesRequest& request, const ReplySpec& spec) {
  out += request.tool_name ? "\"fc_mock_" : "\"msg_mock_";
  out += std::to_string(spec.number);
  out += '"';
}

// {"type":"output_text","annotations":[],"logprobs":[],"text":..}, empty text unless done.
void append_text_part(std::string& out, const ReplySpec& spec, Phase phase) {
  out += R"({"type":"output_text","annotations":[],"logprobs":[],"text":")";
  if (phase == Phase::kCompleted) {
    append_reply_text(out, spec.words);
  }
  out += R"("})";
}

// The output item: a message or a function_call, with no content (no arguments) yet while
// in progress.
void append_output_item(std::string& out, const ResponsesRequest& request, const ReplySpec& spec,
                        Phase phase) {
  out += R"({"id":)";
  append_item_id(out, request, spec);
  if (request.tool_name) {
    out += R"(,"type":"function_call","status":")";
    out += status_of(phase);
    out += R"(","arguments":)";
    append_json_string(out, phase == Phase::kCompleted ? tool_arguments(spec) : "");
    out += R"(,"call_id":")";
    out += kCallId;
    out += R"(","name":)";
    append_json_string(out, *request.tool_name);
    out += "}";
    return;
  }
  out += R"(,"type":"message","status":")";
  out += status_of(phase);
  out += R"(","content":[)";
  if (phase == Phase::kCompleted) {
    append_text_part(out, spec, phase);
  }
  out += R"(],"role":"assistant"})";
}

// The response object: in progress (no output, usage null) or completed.
void append_response(std::string& out, const ResponsesRequest& request, const ReplySpec& spec,
                     Phase phase) {
  const bool done = phase == Phase::kCompleted;
  const std::string created = std::to_string(spec.created);
  out += R"({"id":"resp_mock_)";
  out += std::to_string(spec.number);
  out += R"(","object":"response","created_at":)";
  out += created;
  out += R"(,"status":")";
  out += status_of(phase);
  out += R"(","background":false,"completed_at":)";
  out += done ? created : "null";
  out += R"(,"error":null,"frequency_penalty":0.0,"incomplete_details":null,"instructions":)";
  out += request.instructions;
  out += R"(,"max_output_tokens":)";
  out += request.max_output_tokens;
  out += R"(,"max_tool_calls":null,"model":)";
  append_json_string(out, request.model);
  out += R"(,"output":[)";
  if (done) {
    append_output_item(out, request, spec, phase);
  }
  out += R"(],"parallel_tool_calls":true,"presence_penalty":0.0,"previous_response_id":)";
  out += request.previous_response_id;
  out += R"(,"prompt_cache_key":null,"prompt_cache_retention":null,)"
         R"("reasoning":{"effort":null,"summary":null},"safety_identifier":null,)"
         R"("service_tier":"default","store":)";
  out += request.store ? "true" : "false";
  out += R"(,"temperature":)";
  out += request.temperature;
  out += R"(,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":)";
  out += request.tool_choice;
  out += R"(,"tools":)";
  out += request.tools;
  out += R"(,"top_logprobs":0,"top_p":)";
  out += request.top_p;
  out += R"(,"truncation":"disabled","usage":)";
  if (done) {
    std::uint32_t output = output_tokens(request.tool_name.has_value(), spec.words);
    out += R"({"input_tokens":)";
    out += std::to_string(request.input_tokens);
    out += R"(,"input_tokens_details":{"cached_tokens":0},"output_tokens":)";
    out += std::to_string(output);
    out += R"(,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":)";
    out += std::to_string(std::uint64_t{request.input_tokens} + output);
    out += "}";
  } else {
    out += "null";
  }
  out += R"(,"user":null,"metadata":)";
  out += request.metadata;
  out += "}";
}

// The events of a stream besides the deltas, in the order they are sent.
enum class Event : std::uint8_t {
  kCreated,
  kInProgress,
  kItemAdded,
  kPartAdded,
  kTextDone,
  kArgumentsDone,
  kPartDone,
  kItemDone,
  kCompleted,
};

// Text has a content part to open and close; a function call has not, but has its
// arguments to finish.
constexpr Event kTextPrelude[] = {Event::kCreated, Event::kInProgress, Event::kItemAdded,
                                  Event::kPartAdded};
constexpr Event kCallPrelude[] = {Event::kCreated, Event::kInProgress, Event::kItemAdded};
constexpr Event kTextTrailer[] = {Event::kTextDone, Event::kPartDone, Event::kItemDone,
                                  Event::kCompleted};
constexpr Event kCallTrailer[] = {Event::kArgumentsDone, Event::kItemDone, Event::kCompleted};

class ResponsesStream final : public PhasedStream {
 public:
  ResponsesStream(const ResponsesRequest& request, const ReplySpec& spec)
      : request_(request), spec_(spec), fragments_(tool_argument_fragments(tool_arguments(spec_))) {
    const bool call = request.tool_name.has_value();
    prelude_ = call ? std::span<const Event>(kCallPrelude) : std::span<const Event>(kTextPrelude);
    trailer_ = call ? std::span<const Event>(kCallTrailer) : std::span<const Event>(kTextTrailer);
    if (spec.omit_done) {
      trailer_ = trailer_.first(trailer_.size() - 1);  // without response.completed
    }
    std::uint32_t counted = call ? fragments_.size() : spec.words;
    set_phases(prelude_.size(), counted, trailer_.size());
  }

 private:
  void prelude_event(std::uint32_t i, std::string& out) override { write(prelude_[i], out); }
  void trailer_event(std::uint32_t i, std::string& out) override { write(trailer_[i], out); }

  void counted_event(std::uint32_t i, std::string& out) override {
    if (request_.tool_name) {
      begin(out, "response.function_call_arguments.delta");
      out += R"(,"delta":)";
      append_json_string(out, fragments_[i]);
    } else {
      begin(out, "response.output_text.delta");
      out += R"(,"delta":")";
      append_reply_piece(out, i + 1);
      out += R"(","logprobs":[])";
    }
    end(out);
  }

  void write(Event event, std::string& out) const {
    switch (event) {
      case Event::kCreated:
        return response_event(out, "response.created", Phase::kInProgress);
      case Event::kInProgress:
        return response_event(out, "response.in_progress", Phase::kInProgress);
      case Event::kItemAdded:
        return item_event(out, "response.output_item.added", Phase::kInProgress);
      case Event::kPartAdded:
        return part_event(out, "response.content_part.added", Phase::kInProgress);
      case Event::kTextDone:
        begin(out, "response.output_text.done");
        out += R"(,"logprobs":[],"text":")";
        append_reply_text(out, spec_.words);
        out += '"';
        return end(out);
      case Event::kArgumentsDone:
        begin(out, "response.function_call_arguments.done");
        out += R"(,"arguments":)";
        append_json_string(out, tool_arguments(spec_));
        return end(out);
      case Event::kPartDone:
        return part_event(out, "response.content_part.done", Phase::kCompleted);
      case Event::kItemDone:
        return item_event(out, "response.output_item.done", Phase::kCompleted);
      case Event::kCompleted:
        return response_event(out, "response.completed", Phase::kCompleted);
    }
  }

  void response_event(std::string& out, std::string_view type, Phase phase) const {
    begin_typed_event(out, type);
    out += R"(,"response":)";
    append_response(out, request_, spec_, phase);
    end(out);
  }

  void item_event(std::string& out, std::string_view type, Phase phase) const {
    begin_typed_event(out, type);
    out += R"(,"item":)";
    append_output_item(out, request_, spec_, phase);
    out += R"(,"output_index":0)";
    end(out);
  }

  void part_event(std::string& out, std::string_view type, Phase phase) const {
    begin(out, type);
    out += R"(,"part":)";
    append_text_part(out, spec_, phase);
    end(out);
  }

  // An event about the output item: its type, then content_index (text only), item_id and
  // output_index.
  void begin(std::string& out, std::string_view type) const {
    begin_typed_event(out, type);
    if (!request_.tool_name) {
      out += R"(,"content_index":0)";
    }
    out += R"(,"item_id":)";
    append_item_id(out, request_, spec_);
    out += R"(,"output_index":0)";
  }

  // Every event ends with its sequence_number, its position in the stream.
  void end(std::string& out) const {
    out += R"(,"sequence_number":)";
    out += std::to_string(index());
    out += "}";
    end_sse_event(out);
  }

  ResponsesRequest request_;
  ReplySpec spec_;
  std::array<std::string_view, 3> fragments_;  // into spec_
  std::span<const Event> prelude_;
  std::span<const Event> trailer_;
};

}  // namespace

void ResponseStore::put(std::string id, std::string body) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = bodies_.insert_or_assign(id, std::move(body));
  if (!inserted) {
    return;
  }
  order_.push_back(std::move(id));
  if (order_.size() > kCapacity) {
    bodies_.erase(order_.front());
    order_.pop_front();
  }
}

std::optional<std::string> ResponseStore::get(std::string_view id) const {
  std::lock_guard lock(mu_);
  auto it = bodies_.find(id);
  return it == bodies_.end() ? std::nullopt : std::optional<std::string>(it->second);
}

bool ResponseStore::contains(std::string_view id) const {
  std::lock_guard lock(mu_);
  return bodies_.find(id) != bodies_.end();
}

void ResponseStore::clear() {
  std::lock_guard lock(mu_);
  bodies_.clear();
  order_.clear();
}

Result<ResponsesRequest> parse_responses_request(std::string_view body,
                                                 const ResponseStore& store) {
  return read_request_object(
      body, [&store](const json::object& obj) { return read_responses_request(obj, store); });
}

std::string response_object(const ResponsesRequest& request, const ReplySpec& spec) {
  std::string out;
  append_response(out, request, spec, Phase::kCompleted);
  return out;
}

std::unique_ptr<EventSource> make_responses_stream(const ResponsesRequest& request,
                                                   const ReplySpec& spec) {
  return std::make_unique<ResponsesStream>(request, spec);
}

Result<Reply> respond_responses(std::string_view body, const ReplySpec& spec,
                                ResponseStore& store) {
  auto request = parse_responses_request(body, store);
  if (!request) {
    return request.error();
  }
  if (request->tool_name && spec.tool_name) {
    request->tool_name = spec.tool_name;
  }
  std::string object = response_object(*request, spec);
  if (request->store) {
    store.put("resp_mock_" + std::to_string(spec.number), object);
  }
  if (request->stream) {
    return stream_reply(make_responses_stream(*request, spec));
  }
  return body_reply(std::move(object));
}

Result<Reply> respond_stored_response(std::string_view id, const ResponseStore& store) {
  auto body = store.get(id);
  if (!body) {
    return Error(ErrorKind::kNotFound, "Response with id '" + std::string(id) + "' not found.");
  }
  return body_reply(std::move(*body));
}

}  // namespace sluice::mock
