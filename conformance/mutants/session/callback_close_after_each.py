"""Every capability call closes its connection when it ends: an idle session pays a TCP connect and a TLS handshake per claim and per heartbeat."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                answer = Answer(response.status, self.answer_doc(response, budget, need_object))\n'
    '                session.keep(response)\n',
    '                answer = Answer(response.status, self.answer_doc(response, budget, need_object))\n',
)]
KILLS = ["callback.keep-alive"]
