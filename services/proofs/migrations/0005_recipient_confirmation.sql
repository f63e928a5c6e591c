-- Who may aim a deciding link: the address a credential holding proofs.approve set or confirmed
-- as the proof's recipient (by creating the proof, setting recipientEmail, or sending the proof
-- there). A send by a credential without proofs.approve goes only to it, compared without regard
-- to case. Proofs made before this are confirmed by none: their next send by such a credential
-- needs one holding proofs.approve to confirm the recipient first.
ALTER TABLE proofs ADD COLUMN recipient_confirmed_email text;
