"""Mail the site sends: queued in the outbox with the change it reports, sent by a loop.

A caller queues a mail (`Storage.queue_mail`: a kind, the person's language, a payload, a
dedupe key) inside the transaction that makes its change; `flask --app webapp mail run` (beside
gunicorn, or `--once` from cron) claims what is due, builds each message and sends it:

    kinds.py      what mails there are: each a subject and a template pair (text + HTML)
    parts.py      what a kind adds to its text: inline images (a QR code), attachments (.ics)
    message.py    a queued mail as a MIME message (multipart/alternative, its headers)
    senders.py    where it goes: SMTP (MAIL_HOST set), or .eml files in the instance folder
    delivery.py   the loop: claim a batch, send each, mark it sent, retried or failed
    commands.py   `flask mail run | failed | send-test`

Nothing here is kept between calls in a module: each process (a delivery loop, a gunicorn
worker queueing) works from its app's configuration and the database alone.
"""
