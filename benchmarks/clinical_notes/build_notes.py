"""Write notes.jsonl from the snippets below, with offsets computed and checked.

Each mention is given by its text (and which occurrence, when the text recurs).
The script finds its offsets, checks text[start:end], and checks every code in the default KB.
Run: python benchmarks/clinical_notes/build_notes.py [--kb PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
P, A, POS, C, H, S = "present", "absent", "possible", "conditional", "hypothetical", "someone_else"


def m(text, code, assertion=P, historical=False, occurrence=0):
    return {"text": text, "icd10cm": code, "assertion": assertion, "historical": historical, "occurrence": occurrence}


# (kind, text, mentions); ids and splits are given in order: within each kind, 1st, 3rd and 5th dev, 2nd, 4th and 6th test.
SNIPPETS = [
    # ---------------------------------------------------------------- discharge diagnoses
    ("discharge_diagnoses",
     "DISCHARGE DIAGNOSES:\n1. Community-acquired pneumonia, right lower lobe.\n2. Type 2 diabetes mellitus with hyperglycemia.\n"
     "3. Acute kidney injury, resolved.\n4. Essential hypertension.",
     [m("Community-acquired pneumonia, right lower lobe", "J18.9"), m("Type 2 diabetes mellitus with hyperglycemia", "E11.65"),
      m("Acute kidney injury", "N17.9", P, True), m("Essential hypertension", "I10")]),
    ("discharge_diagnoses",
     "Final diagnoses: acute on chronic systolic congestive heart failure; paroxysmal atrial fibrillation, rate controlled; "
     "CKD stage 3b; hyperkalemia secondary to ACE inhibitor. Ruled out: acute coronary syndrome.",
     [m("acute on chronic systolic congestive heart failure", "I50.23"), m("paroxysmal atrial fibrillation", "I48.0"),
      m("CKD stage 3b", "N18.32"), m("hyperkalemia", "E87.5"), m("acute coronary syndrome", "I24.9", A)]),
    ("discharge_diagnoses",
     "Discharge Dx: NSTEMI (I21.4), s/p PCI to LAD. Secondary: hyperlipidemia; nicotine dependence, cigarettes. "
     "Counseled on cessation. Return to ED if chest pain recurs or new shortness of breath.",
     [m("NSTEMI", "I21.4"), m("I21.4", "I21.4"), m("hyperlipidemia", "E78.5"), m("nicotine dependence, cigarettes", "F17.210"),
      m("chest pain", "R07.9", H), m("shortness of breath", "R06.02", H)]),
    ("discharge_diagnoses",
     "Diagnoses at discharge:\n- Acute pancreatitis, alcohol induced\n- Alcohol dependence with withdrawal\n- Hypomagnesemia\n"
     "No evidence of pancreatic pseudocyst on CT. Billing: K85.20, F10.239.",
     [m("Acute pancreatitis, alcohol induced", "K85.20"), m("Alcohol dependence with withdrawal", "F10.239"),
      m("Hypomagnesemia", "E83.42"), m("pancreatic pseudocyst", "K86.3", A), m("K85.20", "K85.20"), m("F10.239", "F10.239")]),
    # ---------------------------------------------------------------- ED triage
    ("ed_triage",
     "52yo M c/o CP x2h radiating to L arm, +diaphoresis, SOB. hx of MI 2019. Also HTN, DM2, HLD on meds. r/o ACS.",
     [m("CP", "R07.9"), m("diaphoresis", "R61"), m("SOB", "R06.02"), m("MI", "I21.9", P, True), m("HTN", "I10"),
      m("DM2", "E11.9"), m("HLD", "E78.5"), m("ACS", "I24.9", POS)]),
    ("ed_triage",
     "Pt BIBA, found down at home. GCS 14, confused. Hx of seizures, ETOH abuse. Denies HA, no vomitting. "
     "FSBS 42 - hypoglycemia, given amp D50.",
     [m("confused", "R41.0"), m("seizures", "R56.9", P, True), m("ETOH abuse", "F10.10", P, True), m("HA", "R51.9", A),
      m("vomitting", "R11.10", A), m("hypoglycemia", "E16.2")]),
    ("ed_triage",
     "28 F c/o abd pain RLQ since last noc, nausea, low grade fever 38.1. LMP 2 wks ago. r/o appy vs ovarian torsion. "
     "Neg for dysurea.",
     [m("abd pain RLQ", "R10.31"), m("nausea", "R11.0"), m("fever", "R50.9"), m("appy", "K37", POS),
      m("ovarian torsion", "N83.519", POS), m("dysurea", "R30.0", A)]),
    ("ed_triage",
     "Triage: 67M w/ worsening SOB & b/l LE edema x 1wk, 3 pillow orthopnea. Known CHF, COPD on home O2, afib on eliquis. "
     "SpO2 86% RA. ?CHF exacerbation",
     [m("SOB", "R06.02"), m("b/l LE edema", "R60.0"), m("orthopnea", "R06.01"), m("CHF", "I50.9"), m("COPD", "J44.9"),
      m("afib", "I48.91"), m("CHF exacerbation", "I50.9", POS)]),
    # ---------------------------------------------------------------- radiology impressions
    ("radiology",
     "CT HEAD W/O CONTRAST\nIMPRESSION:\n1. No acute intracranial hemorrhage or mass effect.\n"
     "2. Chronic small vessel ischemic disease.\n3. Incidental left maxillary sinus retention cyst.",
     [m("acute intracranial hemorrhage", "I62.9", A), m("Chronic small vessel ischemic disease", "I67.82"),
      m("left maxillary sinus retention cyst", "J34.1")]),
    ("radiology",
     "CHEST X-RAY, 2 VIEWS\nIMPRESSION: Right lower lobe consolidation, compatible with pneumonia in the appropriate "
     "clinical setting. Small right pleural effusion. No pneumothorax.",
     [m("Right lower lobe consolidation", "R91.8"), m("pneumonia", "J18.9", POS), m("right pleural effusion", "J90"),
      m("pneumothorax", "J93.9", A)]),
    ("radiology",
     "CT A/P IMPRESSION: 1. Acute uncomplicated sigmoid diverticulitis. 2. Cholelithiasis without evidence of acute "
     "cholecystitis. 3. Hepatic steatosis.",
     [m("Acute uncomplicated sigmoid diverticulitis", "K57.32"), m("Cholelithiasis", "K80.20"),
      m("acute cholecystitis", "K81.0", A), m("Hepatic steatosis", "K76.0")]),
    ("radiology",
     "MRI L-SPINE IMPRESSION:\n1. L4-L5 disc herniation contacting the traversing left L5 nerve root.\n"
     "2. Multilevel lumbar spinal stenosis, moderate at L3-L4.\n3. Lumbar degenerative disc disease.\n"
     "Sacroiliac joints unremarkable.",
     [m("L4-L5 disc herniation", "M51.26"), m("lumbar spinal stenosis", "M48.061"),
      m("Lumbar degenerative disc disease", "M51.369")]),
    # ---------------------------------------------------------------- problem lists
    ("problem_list",
     "Problem List:\n- Hypothyroidism (E03.9)\n- Obesity, BMI 34\n- Obstructive sleep apnea on CPAP\n- GERD\n"
     "- h/o DVT 2019, completed anticoagulation\n- s/p appendectomy (2004)",
     [m("Hypothyroidism", "E03.9"), m("E03.9", "E03.9"), m("Obesity", "E66.9"), m("Obstructive sleep apnea", "G47.33"),
      m("GERD", "K21.9"), m("DVT", "I82.409", P, True)]),
    ("problem_list",
     "Active problems: 1) CKD 4 2/2 diabetic nephropathy 2) Anemia of chronic kidney disease 3) Secondary "
     "hyperparathyroidism of renal origin 4) Peripheral neuropathy. Inactive: Hep C, treated, SVR achieved.",
     [m("CKD 4", "N18.4"), m("diabetic nephropathy", "E11.21"), m("Anemia of chronic kidney disease", "D63.1"),
      m("Secondary hyperparathyroidism of renal origin", "N25.81"), m("Peripheral neuropathy", "G62.9"),
      m("Hep C", "B19.20", P, True)]),
    ("problem_list",
     "PROBLEM LIST (reviewed 3/2):\nAsthma, mild intermittent, uncomplicated\nMigraine without aura\nIron deficiency anemia\n"
     "Anxiety\nPrediabetes - diet controlled\nEssential hypertension - I10",
     [m("Asthma, mild intermittent, uncomplicated", "J45.20"), m("Migraine without aura", "G43.009"),
      m("Iron deficiency anemia", "D50.9"), m("Anxiety", "F41.9"), m("Prediabetes", "R73.03"),
      m("Essential hypertension", "I10"), m("I10", "I10")]),
    ("problem_list",
     "Problems:\n# Chronic low back pain\n# Osteoarthritis of both knees\n# BPH with LUTS\n# E11.9 - T2DM without complications\n"
     "# Vitamin D deficiency\n# Former smoker, quit 2010 (30 pk-yr)",
     [m("Chronic low back pain", "M54.50"), m("Osteoarthritis of both knees", "M17.0"), m("BPH with LUTS", "N40.1"),
      m("E11.9", "E11.9"), m("T2DM without complications", "E11.9"), m("Vitamin D deficiency", "E55.9"),
      m("Former smoker", "Z87.891", P, True)]),
    # ---------------------------------------------------------------- family history
    ("family_history",
     "FAMILY HISTORY: Mother with breast cancer diagnosed at 45. Father died of MI at 60. Brother has type 1 diabetes. "
     "No family history of colon cancer.",
     [m("breast cancer", "C50.919", S), m("MI", "I21.9", S), m("type 1 diabetes", "E10.9", S), m("colon cancer", "C18.9", S)]),
    ("family_history",
     "FHx: mom - HTN, hypothyroid; dad - prostate ca, CABG x3 at 58; maternal grandmother with Alzheimer's. "
     "Pt himself denies any heart problems.",
     [m("HTN", "I10", S), m("hypothyroid", "E03.9", S), m("prostate ca", "C61", S), m("Alzheimer's", "G30.9", S),
      m("heart problems", "I51.9", A)]),
    ("family_history",
     "Family hx significant for sudden cardiac death in paternal uncle (age 34) and hypertrophic cardiomyopathy in a first "
     "cousin. Patient reports palpitations with exertion; no syncope.",
     [m("sudden cardiac death", "I46.9", S), m("hypertrophic cardiomyopathy", "I42.2", S), m("palpitations", "R00.2", C),
      m("syncope", "R55", A)]),
    ("family_history",
     "Family History\nDiabetis - mother, maternal aunt\nStroke - father (age 70)\nDepression - sister\n"
     "No known family hx of bleeding disorders.",
     [m("Diabetis", "E11.9", S), m("Stroke", "I63.9", S), m("Depression", "F32.A", S), m("bleeding disorders", "D68.9", S)]),
    # ---------------------------------------------------------------- lay speech
    ("lay_speech",
     "Pt states \"I just can't catch my breath when I walk to the mailbox\" and \"my ankles are all swole up.\" "
     "She ran out of her water pills last week.",
     [m("can't catch my breath", "R06.02", C), m("ankles are all swole up", "R60.0")]),
    ("lay_speech",
     "Patient says she has \"sugar diabetes\" and \"high blood,\" and her \"nerves are bad lately.\" She is not sure whether "
     "she had \"the shingles\" or just a rash last spring.",
     [m("sugar diabetes", "E11.9"), m("high blood", "I10"), m("nerves are bad", "R45.0"), m("shingles", "B02.9", POS, True),
      m("rash", "R21", POS, True)]),
    ("lay_speech",
     "Mom says \"he's been burning up all night and pulling at his ear.\" Also a \"stuffy nose\" since Monday. "
     "No \"throwing up.\"",
     [m("burning up", "R50.9"), m("stuffy nose", "R09.81"), m("throwing up", "R11.10", A)]),
    ("lay_speech",
     "Pt reports \"my heart feels like it's racing\" and \"I get dizzy spells if I stand up too fast.\" Denies "
     "\"passing out.\" Takes a baby aspirin and a \"fluid pill.\"",
     [m("heart feels like it's racing", "R00.2"), m("dizzy spells", "R42", C), m("passing out", "R55", A)]),
    # ---------------------------------------------------------------- paediatrics
    ("paediatrics",
     "4 y/o brought in by mom for fever x3 days and barky cough. No stridor at rest. Dx: croup. "
     "Sibling at home with RSV bronchiolitis.",
     [m("fever", "R50.9"), m("barky cough", "R05.9"), m("stridor", "R06.1", A), m("croup", "J05.0"),
      m("RSV bronchiolitis", "J21.0", S)]),
    ("paediatrics",
     "Well child check, 18 mo. Growing along 50th %ile. Hx of NICU stay for neonatal jaundice, resolved. Eczema on cheeks, "
     "mild. Parents worried about speech delay; will reassess at 2 yrs and refer to EI if no words by then.",
     [m("neonatal jaundice", "P59.9", P, True), m("Eczema", "L30.9"), m("speech delay", "F80.9", POS)]),
    ("paediatrics",
     "6 mo F with 2 days of watery diarhea and decreased wet diapers. Mild dehydration on exam. Tolerating Pedialyte. "
     "Rotavirus gastroenteritis suspected given daycare outbreak; stool antigen pending.",
     [m("watery diarhea", "R19.7"), m("dehydration", "E86.0"), m("Rotavirus gastroenteritis", "A08.0", POS)]),
    ("paediatrics",
     "12 yo with known ADHD, combined type, on stimulant. Presents with R ankle sprain from soccer, initial visit. "
     "No h/o asthma. Immunizations UTD.",
     [m("ADHD, combined type", "F90.2"), m("R ankle sprain", "S93.401A"), m("asthma", "J45.909", A)]),
    # ---------------------------------------------------------------- oncology
    ("oncology",
     "ONCOLOGY:\n62F with invasive ductal carcinoma of the left breast, ER+/PR+/HER2-, stage IIA, s/p lumpectomy. "
     "No evidence of metastatic disease on PET. Hot flashes on tamoxifen.",
     [m("invasive ductal carcinoma of the left breast", "C50.912"), m("ER+", "Z17.0"), m("PR+", "Z17.21"),
      m("HER2-", "Z17.32"), m("metastatic disease", "C79.9", A), m("Hot flashes", "R23.2")]),
    ("oncology",
     "Heme/Onc f/u: Stage IV NSCLC, adenocarcinoma of the right upper lobe, EGFR exon 19 deletion, with brain mets. "
     "On osimertinib. Grade 2 diarrhea and paronychia, likely drug-related. No new bone lesions.",
     [m("NSCLC", "C34.90"), m("adenocarcinoma of the right upper lobe", "C34.11"), m("brain mets", "C79.31"),
      m("diarrhea", "R19.7"), m("paronychia", "L03.0"), m("bone lesions", "M89.9", A)]),
    ("oncology",
     "Assessment and Plan: 71M with newly diagnosed diffuse large B-cell lymphoma. Tumor lysis syndrome risk high - "
     "start allopurinol, IVF. Prior hx of prostate cancer s/p radiation 2015, in remission.",
     [m("diffuse large B-cell lymphoma", "C83.30"), m("Tumor lysis syndrome", "E88.3", H),
      m("prostate cancer", "C61", P, True)]),
    ("oncology",
     "Pathology, right hemicolectomy: adenocarcinoma of the ascending colon, moderately differentiated, with two adjacent "
     "tubular adenomas. pT3 pN0 (0/22 lymph nodes). Margins negative. No lymphovascular invasion.",
     [m("adenocarcinoma of the ascending colon", "C18.2"), m("tubular adenomas", "D12.2")]),
    # ---------------------------------------------------------------- drug-induced conditions
    ("drug_induced",
     "Admitted with acute kidney injury attributed to NSAID use (ibuprofen 800 mg TID x3 wks). Also noted: "
     "lisinopril-induced angioedema in 2021; avoid all ACE inhibitors.",
     [m("acute kidney injury", "N17.9"), m("lisinopril-induced angioedema", "T78.3", P, True)]),
    ("drug_induced",
     "Steroid-induced hyperglycemia in a non-diabetic patient on prednisone 60 mg for COPD exacerbation. Monitor FSBG "
     "AC/HS; start sliding scale if BG > 180.",
     [m("Steroid-induced hyperglycemia", "R73.9"), m("diabetic", "E11.9", A), m("COPD exacerbation", "J44.1")]),
    ("drug_induced",
     "Pt developed C. diff colitis after a course of clindamycin for a dental abscess. Also statin-associated myalgias, "
     "resolved off atorvastatin. No rhabdo, CK normal.",
     [m("C. diff colitis", "A04.72"), m("dental abscess", "K04.7", P, True),
      m("statin-associated myalgias", "M79.10", P, True), m("rhabdo", "M62.82", A)]),
    ("drug_induced",
     "Dx: Lithium toxicity with coarse tremor and acute confusion; Li level 2.4. Hx of lithium-induced hypothyroidism. "
     "Nephrogenic diabetes insipidus cannot be excluded.",
     [m("Lithium toxicity", "T43.591"), m("coarse tremor", "R25.1"), m("acute confusion", "R41.0"),
      m("lithium-induced hypothyroidism", "E03.2", P, True), m("Nephrogenic diabetes insipidus", "N25.1", POS)]),
    # ---------------------------------------------------------------- psychiatry
    ("psychiatry",
     "Psych eval: 34F with major depressive disorder, recurrent, severe without psychotic features. Passive SI, denies "
     "plan or intent. No HI. Denies AVH. Hx of PTSD after MVA.",
     [m("major depressive disorder, recurrent, severe without psychotic features", "F33.2"), m("Passive SI", "R45.851"),
      m("HI", "R45.850", A), m("AVH", "R44.3", A), m("PTSD", "F43.10", P, True)]),
    ("psychiatry",
     "Mental status: pressured speech, flight of ideas, decreased need for sleep x5 days. Impression: bipolar I disorder, "
     "current episode manic, severe; r/o psychotic features. Hx cannabis use disorder, moderate, in early remission.",
     [m("pressured speech", None), m("flight of ideas", None), m("decreased need for sleep", None),
      m("bipolar I disorder, current episode manic, severe", "F31.13"),
      m("cannabis use disorder, moderate, in early remission", "F12.21", P, True)]),
    ("psychiatry",
     "Chief complaint: \"I haven't slept in days and I keep hearing voices.\" Pt with schizoaffective disorder, bipolar "
     "type, off meds x2 months. Possible medication nonadherence. No evidence of catatonia.",
     [m("haven't slept in days", "G47.00"), m("hearing voices", "R44.0"),
      m("schizoaffective disorder, bipolar type", "F25.0"), m("medication nonadherence", "Z91.14", POS),
      m("catatonia", "F06.1", A)]),
    ("psychiatry",
     "Intake: 19 yo with anorexia nervosa, restricting type, BMI 15.8. Amenorrhea x6 mo. Bradycardia to 42 overnight. "
     "Will admit to medical unit if weight drops below 40 kg. Denies self-harm.",
     [m("anorexia nervosa, restricting type", "F50.019"), m("Amenorrhea", "N91.2"), m("Bradycardia", "R00.1"),
      m("self-harm", "R45.88", A)]),
    # ---------------------------------------------------------------- dermatology
    ("dermatology",
     "Derm: pearly papule with telangiectasia on the left nasal ala, concerning for basal cell carcinoma. Shave biopsy "
     "done. Also seborrheic keratoses on the back. Hx of actinic keratoses treated with cryo.",
     [m("basal cell carcinoma", "C44.311", POS), m("seborrheic keratoses", "L82.1"),
      m("actinic keratoses", "L57.0", P, True)]),
    ("dermatology",
     "Diffuse pruritic urticarial rash over trunk and arms starting 2 days after amoxicillin. Likely drug eruption. "
     "No mucosal involvement or blistering to suggest SJS. Hx of atopic dermatitis as a child.",
     [m("urticarial rash", "L50.9"), m("drug eruption", "L27.0", POS), m("SJS", "L51.1", A),
      m("atopic dermatitis", "L20.9", P, True)]),
    ("dermatology",
     "Scalp: well-demarcated erythematous plaques with silvery scale c/w plaque psoriasis. Nail pitting present. "
     "Pt denies joint pain or morning stiffness; screen for psoriatic arthritis at each visit.",
     [m("plaque psoriasis", "L40.0"), m("Nail pitting", "L60.8"), m("joint pain", "M25.50", A),
      m("morning stiffness", "M25.60", A), m("psoriatic arthritis", "L40.50", H)]),
    ("dermatology",
     "Chronic hand dermatitis, likely irritant contact dermatitis from frequent handwashing (RN). Onychomycosis of right "
     "great toenail. Return if signs of secondary infection.",
     [m("Chronic hand dermatitis", "L30.9"), m("irritant contact dermatitis", "L24.9", POS),
      m("Onychomycosis of right great toenail", "B35.1"), m("secondary infection", "L08.9", H)]),
    # ---------------------------------------------------------------- obstetrics
    ("obstetrics",
     "G2P1 at 32w3d with gestational diabetes, diet controlled. Gestational hypertension, no proteinuria; r/o "
     "preeclampsia with labs today. Prior C-section x1.",
     [m("gestational diabetes, diet controlled", "O24.410"), m("Gestational hypertension", "O13.3"),
      m("proteinuria", "R80.9", A), m("preeclampsia", "O14.93", POS)]),
    ("obstetrics",
     "OB triage: 24 yo G1P0 at 38w1d c/o leakage of clear fluid since 0400; nitrazine +, c/w premature rupture of "
     "membranes. No contractions. Denies HA, visual changes, RUQ pain.",
     [m("premature rupture of membranes", "O42.92"), m("HA", "R51.9", A), m("visual changes", "H53.9", A),
      m("RUQ pain", "R10.11", A)]),
    ("obstetrics",
     "PPD#2 s/p SVD complicated by 2nd degree perineal laceration and postpartum hemorrhage (EBL 1100 mL), s/p 2u pRBC. "
     "Now with symptomatic anemia; dizzy when standing. Hx of postpartum depression with first pregnancy; EPDS today 4.",
     [m("2nd degree perineal laceration", "O70.1"), m("postpartum hemorrhage", "O72.1"), m("symptomatic anemia", "O90.81"), m("dizzy", "R42", C),
      m("postpartum depression", "F53.0", P, True)]),
    ("obstetrics",
     "Prenatal visit, 11w by LMP. Hyperemesis gravidarum, 3 kg weight loss since 8w. History of two first-trimester "
     "miscarriages. Return to L&D if unable to keep fluids down or if vaginal bleeding.",
     [m("Hyperemesis gravidarum", "O21.0"), m("weight loss", "R63.4"), m("miscarriages", "O03.9", P, True),
      m("vaginal bleeding", "O20.9", H)]),
    # ---------------------------------------------------------------- orthopaedics
    ("orthopaedics",
     "Ortho: displaced fracture of the right distal radius, closed, initial encounter. Neurovascularly intact distally. "
     "Also has left knee osteoarthritis, managed with injections.",
     [m("displaced fracture of the right distal radius, closed", "S52.501A"), m("left knee osteoarthritis", "M17.12")]),
    ("orthopaedics",
     "45M seen for subsequent visit for L tib/fib shaft fx, routine healing. Early compartment syndrome was ruled out at "
     "the last visit. Chronic R shoulder rotator cuff tear, nontraumatic.",
     [m("L tib/fib shaft fx", "S82.202D"), m("compartment syndrome", "T79.A22", A),
      m("Chronic R shoulder rotator cuff tear, nontraumatic", "M75.101")]),
    ("orthopaedics",
     "Left hip pain after mechanical fall from standing today. X-ray: nondisplaced left femoral neck fracture. Known "
     "osteoporosis on alendronate. Denies dizziness before the fall.",
     [m("Left hip pain", "M25.552"), m("nondisplaced left femoral neck fracture", "S72.002"), m("osteoporosis", "M81.0"),
      m("dizziness", "R42", A)]),
    ("orthopaedics",
     "Post-op check: s/p R TKA 6 wks ago for primary OA. Mild stiffness, ROM 5-105. Incision healed, no signs of "
     "infection. Contralateral knee with meniscal tear; plan MRI.",
     [m("primary OA", "M17.11", P, True), m("stiffness", "M25.661"), m("infection", "T81.40", A),
      m("meniscal tear", "S83.207")]),
    # ---------------------------------------------------------------- infections
    ("infection",
     "UA positive, urine cx growing E. coli >100K. Dx: acute cystitis without hematuria due to E. coli. No flank pain or "
     "CVA tenderness to suggest pyelonephritis.",
     [m("acute cystitis without hematuria", "N30.00"), m("flank pain", "R10.A0", A), m("CVA tenderness", None, A),
      m("pyelonephritis", "N12", A)]),
    ("infection",
     "Febrile to 39.4, HR 118, lactate 3.1. Sepsis secondary to LLL pnuemonia. Blood cx pending. Consider COVID-19; "
     "PCR sent.",
     [m("Febrile", "R50.9"), m("Sepsis", "A41.9"), m("LLL pnuemonia", "J18.9"), m("COVID-19", "U07.1", POS)]),
    ("infection",
     "ID consult: 58M with HIV on ART, CD4 480, VL undetectable. Now with cellulitus of the right lower leg. Hx of latent "
     "TB treated with INH. Hep B surface Ag negative.",
     [m("HIV", "B20"), m("cellulitus of the right lower leg", "L03.115"), m("latent TB", "Z22.7", P, True),
      m("Hep B", "B19.10", A)]),
    ("infection",
     "Peds ED: 7yo with 3 days sore throat, fever, tender anterior cervical LAD, no cough. Rapid strep +. Dx strep "
     "pharyngitis. Rash on trunk with sandpaper texture, ?scarlet fever.",
     [m("sore throat", "R07.0"), m("fever", "R50.9"), m("anterior cervical LAD", "R59.0"), m("cough", "R05.9", A),
      m("strep pharyngitis", "J02.0"), m("Rash", "R21"), m("scarlet fever", "A38.9", POS)]),
    # ---------------------------------------------------------------- cardiology
    ("cardiology",
     "TTE: LVEF 30-35%, global hypokinesis. Impression: ischemic cardiomyopathy with HFrEF, NYHA class II. Moderate mitral "
     "regurgitation. No pericardial effusion. Codes: I25.5, I50.20.",
     [m("ischemic cardiomyopathy", "I25.5"), m("HFrEF", "I50.20"), m("mitral regurgitation", "I34.0"),
      m("pericardial effusion", "I31.39", A), m("I25.5", "I25.5"), m("I50.20", "I50.20")]),
    ("cardiology",
     "Cards f/u: HTN, HLD, s/p CABG 2018 for 3VD. Stable angina, CCS class II: chest tightness when climbing 2 flights, "
     "relieved by rest. No PND, no syncope. If chest pain >5 min not relieved by NTG, call 911.",
     [m("HTN", "I10"), m("HLD", "E78.5"), m("3VD", "I25.10", P, True), m("Stable angina", "I20.89"),
      m("chest tightness", "R07.89", C), m("PND", "R06.00", A), m("syncope", "R55", A), m("chest pain", "R07.9", H)]),
    ("cardiology",
     "EKG: atrial flutter with 2:1 block, rate 150. Hx of WPW s/p ablation. Pt c/o palpitations and lightheadedness. "
     "CHA2DS2-VASc 3; r/o LA thrombus by TEE prior to cardioversion.",
     [m("atrial flutter", "I48.92"), m("WPW", "I45.6", P, True), m("palpitations", "R00.2"), m("lightheadedness", "R42"),
      m("LA thrombus", "I51.3", POS)]),
    ("cardiology",
     "Pt w/ severe aortic stenosis, mean gradient 48 mmHg, referred for TAVR. Hx rheumatic fever in childhood. Sister had "
     "a bicuspid aortic valve. Denies exertional syncope.",
     [m("aortic stenosis", "I35.0"), m("rheumatic fever", "I00", P, True), m("bicuspid aortic valve", "Q23.81", S),
      m("exertional syncope", "R55", A)]),
    # ---------------------------------------------------------------- second batch (cn-061 to cn-090), another writer
    ("discharge_diagnoses",
     "DISCHARGE DIAGNOSES:\n1. Bleeding duodenal ulcer, s/p EGD with clip placement.\n2. Acute blood loss anemia, transfused 2u PRBC.\n"
     "3. Alcoholic cirrhosis of liver with ascites.\n4. Thrombocytopenia, chronic.\nNo hepatic encephalopathy this admission. "
     "F/u GI in 2 wks; return for black stools or vomiting blood.",
     [m("Bleeding duodenal ulcer", "K26.4"), m("Acute blood loss anemia", "D62"),
      m("Alcoholic cirrhosis of liver with ascites", "K70.31"), m("Thrombocytopenia", "D69.6"),
      m("hepatic encephalopathy", "K76.82", A), m("black stools", "K92.1", H), m("vomiting blood", "K92.0", H)]),
    ("discharge_diagnoses",
     "Principal diagnosis: Type 1 diabetes mellitus with ketoacidosis without coma (E10.10).\nSecondary: hypokalemia, on oral KCl; "
     "viral gastroenteritis; prerenal azotemia, improved with IVF.\nComorbid: Hashimoto's thyroiditis on levothyroxine.\n"
     "Pancreatitis ruled out (lipase normal).",
     [m("Type 1 diabetes mellitus with ketoacidosis without coma", "E10.10"), m("E10.10", "E10.10"), m("hypokalemia", "E87.6"),
      m("viral gastroenteritis", "A08.4"), m("prerenal azotemia", "R39.2"), m("Hashimoto's thyroiditis", "E06.3"),
      m("Pancreatitis", "K85.90", A)]),
    ("ed_triage",
     "ED triage: 62 y/o M c/o acute R great toe pain overnight, unable to bear weight. h/o gout, last flare 2022. CKD stage 3a, "
     "T2DM w/ peripheral neuropathy. Afebrile, denies chills. ?septic arthritis vs gout flare.",
     [m("R great toe pain", "M79.674"), m("gout", "M10.9", P, True), m("CKD stage 3a", "N18.31"),
      m("T2DM w/ peripheral neuropathy", "E11.42"), m("chills", "R68.83", A), m("septic arthritis", "M00.9", POS),
      m("gout flare", "M10.9", POS)]),
    ("ed_triage",
     "Triage: 29M c/o sudden L scrotal pain x4 hrs, onset at rest, + N/V. r/o testicular torsion vs epididymitis, urology paged. "
     "Negative for penile discharge. Hx of R inguinal hernia, repaired as infant.",
     [m("L scrotal pain", "N50.82"), m("N/V", "R11.2"), m("testicular torsion", "N44.00", POS), m("epididymitis", "N45.1", POS),
      m("penile discharge", "R36.9", A), m("R inguinal hernia", "K40.90", P, True)]),
    ("radiology",
     "CTA CHEST (PE PROTOCOL)\nIMPRESSION:\n1. Acute pulmonary emboli in the right lower lobe segmental arteries. RV/LV ratio 0.8.\n"
     "2. 6 mm solid pulmonary nodule, left upper lobe; CT follow-up in 6-12 months.\n3. Centrilobular emphysema.\n"
     "4. Incidental 1.5 cm right thyroid nodule; recommend thyroid US.\n5. No aortic dissection.",
     [m("Acute pulmonary emboli", "I26.99"), m("solid pulmonary nodule", "R91.1"), m("Centrilobular emphysema", "J43.2"),
      m("thyroid nodule", "E04.1"), m("aortic dissection", "I71.00", A)]),
    ("radiology",
     "PELVIC US, TRANSABDOMINAL AND TRANSVAGINAL\nIMPRESSION:\n1. Multiple intramural fibroids, largest 4.2 cm.\n"
     "2. Heterogeneous myometrium, suggestive of adenomyosis.\n3. Left ovarian cyst, 3.1 cm, simple-appearing.\n"
     "4. Endometrial stripe 14 mm; endometrial hyperplasia not excluded.\n5. No hydronephrosis.",
     [m("intramural fibroids", "D25.1"), m("adenomyosis", "N80.03", POS), m("Left ovarian cyst", "N83.202"),
      m("endometrial hyperplasia", "N85.00", POS), m("hydronephrosis", "N13.30", A)]),
    ("problem_list",
     "PROBLEMS (active):\n- Seropositive rheumatoid arthritis, on MTX\n- Primary open-angle glaucoma, bilateral, moderate stage\n"
     "- Diverticulosis of colon\n- Osteopenia\n- Pure hypertriglyceridemia (E78.1)\nHistorical:\n- h/o colon polyps, colonoscopy 2023 clear",
     [m("Seropositive rheumatoid arthritis", "M05.9"), m("Primary open-angle glaucoma, bilateral, moderate stage", "H40.1132"),
      m("Diverticulosis of colon", "K57.30"), m("Osteopenia", "M85.80"), m("Pure hypertriglyceridemia", "E78.1"),
      m("E78.1", "E78.1"), m("colon polyps", "K63.5", P, True)]),
    ("problem_list",
     "PL:\n1. Parkinsons dz (G20.A1)\n2. Orthostatic hypotention\n3. Chronic constipation\n4. Dry macular degeneration, both eyes\n"
     "5. Bilateral sensorineural hearing loss, wears aids\n6. Recurrent falls - PT/OT, home safety eval",
     [m("Parkinsons dz", "G20.A1"), m("G20.A1", "G20.A1"), m("Orthostatic hypotention", "I95.1"),
      m("Chronic constipation", "K59.09"), m("Dry macular degeneration, both eyes", "H35.3130"),
      m("Bilateral sensorineural hearing loss", "H90.3"), m("Recurrent falls", "R29.6")]),
    ("family_history",
     "FAMILY HISTORY:\nMother - ovarian cancer, dx at 52\nFather - AAA repair at 68; kidney stones\nPaternal grandfather - emphysema\n"
     "Sister - celiac disease\nNo FH of early CAD.",
     [m("ovarian cancer", "C56.9", S), m("AAA", "I71.40", S), m("kidney stones", "N20.0", S), m("emphysema", "J43.9", S),
      m("celiac disease", "K90.0", S), m("CAD", "I25.10", S)]),
    ("family_history",
     "Family History:\nMother and maternal grandfather with ADPKD; grandfather developed ESRD, on HD at 55.\nFather - hemochromatosis.\n"
     "Paternal aunt - SLE.\nNo known family hx of brain aneurysm. Pt's own renal US today showed no renal cysts.",
     [m("ADPKD", "Q61.2", S), m("ESRD", "N18.6", S), m("hemochromatosis", "E83.119", S), m("SLE", "M32.9", S),
      m("brain aneurysm", "I67.1", S), m("renal cysts", "N28.1", A)]),
    ("lay_speech",
     "Pt states \"I been peeing all the time and I'm thirsty constantly\" and \"my feet feel like pins and needles.\" Says her "
     "\"sugar was through the roof\" at the pharmacy check. Denies \"blurry eyes.\"",
     [m("peeing all the time", "R35.0"), m("thirsty", "R63.1"), m("pins and needles", "R20.2"),
      m("sugar was through the roof", "R73.9"), m("blurry eyes", "H53.8", A)]),
    ("lay_speech",
     "Husband says \"she's been real forgetful, left the stove on twice\" and \"she gets all turned around in the evenings.\" "
     "Pt says \"my back's been killing me\" and \"I can't hold my water\" when she coughs. She doesn't have \"the sugar,\" "
     "per husband. Her mother had \"hardening of the arteries.\"",
     [m("forgetful", "R41.3"), m("all turned around", "R41.0", C), m("back's been killing me", "M54.9"),
      m("can't hold my water", "N39.3", C), m("sugar", "E11.9", A), m("hardening of the arteries", "I70.90", S)]),
    ("paediatrics",
     "Peds sick visit: 3 yo M c/o R ear pain x1 day, irritable overnight. Exam: R TM bulging, erythematous - acute suppurative "
     "otitis media, right ear. L TM clear. Also acute conjunctivitis OU. Hx of recurrent wheezing; no wheeze today. "
     "Return if signs of mastoiditis.",
     [m("R ear pain", "H92.01"), m("irritable", "R45.4"), m("acute suppurative otitis media, right ear", "H66.001"),
      m("acute conjunctivitis OU", "H10.33"), m("recurrent wheezing", "R06.2", P, True), m("wheeze", "R06.2", A),
      m("mastoiditis", "H70.90", H)]),
    ("paediatrics",
     "Newborn exam, DOL 2, term male (39w, SVD). Glanular hypospadias - urology referral, no circ. Undescended L testis. "
     "Sacral dimple, base visible, no hair tuft. Tongue-tie, latching well. Mom GBS+, adequately treated; no signs of "
     "neonatal sepsis. Older brother had pyloric stenosis.",
     [m("Glanular hypospadias", "Q54.0"), m("Undescended L testis", "Q53.10"), m("Sacral dimple", "Q82.6"),
      m("Tongue-tie", "Q38.1"), m("neonatal sepsis", "P36.9", A), m("pyloric stenosis", "Q40.0", S)]),
    ("oncology",
     "Heme/Onc f/u: 67M with IgG kappa multiple myeloma (C90.00), not in remission, on cycle 4 of VRd. Chemo-induced peripheral "
     "neuropathy from bortezomib, grade 1. Denies new bone pain. Ca 9.4, no hypercalcemia. Hx of melanoma of the R forearm "
     "s/p WLE 2016, no recurrence.",
     [m("multiple myeloma", "C90.00"), m("C90.00", "C90.00"), m("Chemo-induced peripheral neuropathy", "G62.0"),
      m("bone pain", "M89.8X9", A), m("hypercalcemia", "E83.52", A), m("melanoma of the R forearm", "C43.61", P, True)]),
    ("oncology",
     "Onc consult: 69M with pancreatic head adenocarcinoma, locally advanced, with obstructive jaundice s/p biliary stent. "
     "Cancer-related cachexia. Malignant ascites ruled out on US. New LLE DVT, started enoxaparin. Plan FOLFIRINOX; "
     "discussed risk of febrile neutropenia.",
     [m("pancreatic head adenocarcinoma", "C25.0"), m("obstructive jaundice", "K83.1"), m("Cancer-related cachexia", "R64"),
      m("Malignant ascites", "R18.0", A), m("LLE DVT", "I82.402"), m("febrile neutropenia", "D70.9", H)]),
    ("drug_induced",
     "Assessment:\n1. Hydralazine-induced lupus with arthralgias and pleuritic chest pain; anti-histone Ab +. Hydralazine stopped.\n"
     "2. Opioid-induced constipation on oxycodone - start senna.\n3. Thiazide-associated hyponatremia, Na 127; HCTZ held.\n"
     "4. Hx of drug-induced neutropenia from methimazole (2018), resolved.",
     [m("Hydralazine-induced lupus", "M32.0"), m("arthralgias", "M25.50"), m("pleuritic chest pain", "R07.81"),
      m("Opioid-induced constipation", "K59.03"), m("Thiazide-associated hyponatremia", "E87.1"),
      m("drug-induced neutropenia", "D70.2", P, True)]),
    ("drug_induced",
     "Inpatient consult: started on linezolid while on sertraline; now with agitation, hyperreflexia and hyperthermia to 39.2, "
     "c/w serotonin syndrome. NMS felt less likely given normal CK. Separately, tardive diskinesia from prior haloperidol. "
     "Also drug-induced QT prolongation (QTc 510); will stop ondansetron if QTc > 550.",
     [m("agitation", "R45.1"), m("hyperreflexia", "R29.2"), m("hyperthermia", "R50.9"), m("serotonin syndrome", "G90.81"),
      m("NMS", "G21.0", POS), m("tardive diskinesia", "G24.01"), m("drug-induced QT prolongation", "R94.31")]),
    ("psychiatry",
     "Psychiatry follow-up: 27M with generalized anxiety disorder and panic disorder without agoraphobia; panic attacks down to "
     "1/month on sertraline. Alcohol use disorder, mild, in sustained remission. Screened for OCD - negative. Insomnia when "
     "stressed at work. Denies SI/HI.",
     [m("generalized anxiety disorder", "F41.1"), m("panic disorder without agoraphobia", "F41.0"), m("panic attacks", "F41.0"),
      m("Alcohol use disorder, mild, in sustained remission", "F10.11", P, True), m("OCD", "F42.9", A),
      m("Insomnia", "G47.00", C), m("SI", "R45.851", A), m("HI", "R45.850", A)]),
    ("psychiatry",
     "Addiction psychiatry consult: 31M with opioid use disorder, severe, on buprenorphine maintenance; last use 3 wks ago. "
     "Also methamphetamine use disorder, moderate, using 2-3x/wk. Endorses anhedonia. Denies paranoia. Exam: fluctuant "
     "L antecubital abscess at injection site. Father with alcoholism.",
     [m("opioid use disorder, severe", "F11.20"), m("methamphetamine use disorder, moderate", "F15.20"),
      m("anhedonia", "R45.84"), m("paranoia", "F22", A), m("L antecubital abscess", "L02.414"),
      m("alcoholism", "F10.20", S)]),
    ("dermatology",
     "Derm clinic:\n1) Acne vulgaris, inflammatory, on doxycycline.\n2) Hidradenitis supurativa of both axillae, Hurley II.\n"
     "3) Melasma.\n4) Seborrheic dermatitis, face.\nNo e/o rosacea. Changing pigmented lesion on L shoulder; dermoscopy "
     "benign-appearing, but dysplastic nevus not excluded - shave biopsy next visit.",
     [m("Acne vulgaris", "L70.0"), m("Hidradenitis supurativa", "L73.2"), m("Melasma", "L81.1"),
      m("Seborrheic dermatitis", "L21.9"), m("rosacea", "L71.9", A), m("dysplastic nevus", "D22.62", POS)]),
    ("dermatology",
     "Wound/derm consult, 84F in SNF: Bullous pemphigoid, tense bullae on thighs, on clobetasol. Stage 2 pressure injury of "
     "the sacrum. Candidal intertrigo under both breasts. Diffuse xerosis. Scabies considered but scraping negative. "
     "Will biopsy oral mucosa if new erosions, to r/o pemphigus vulgaris.",
     [m("Bullous pemphigoid", "L12.0"), m("Stage 2 pressure injury of the sacrum", "L89.152"),
      m("Candidal intertrigo", "B37.2"), m("xerosis", "L85.3"), m("Scabies", "B86", A),
      m("pemphigus vulgaris", "L10.0", H)]),
    ("obstetrics",
     "OB visit: 38 yo G4P2103 at 29w4d. Intrahepatic cholestasis of pregnancy - pruritus of palms and soles, bile acids 28. "
     "Complete placenta previa on US, asymptomatic. AMA. h/o CIN 2 s/p LEEP (2019). Present to L&D for any signs of "
     "preterm labor.",
     [m("Intrahepatic cholestasis of pregnancy", "O26.643"), m("pruritus", "L29.9"), m("Complete placenta previa", "O44.03"),
      m("AMA", "O09.523"), m("CIN 2", "N87.1", P, True), m("preterm labor", "O60.03", H)]),
    ("obstetrics",
     "Early pregnancy unit: 27 yo G2P0010 at 6w3d by LMP with vaginal spotting and LLQ pain x2 days. bhCG 1850, TVUS no IUP. "
     "Concern for left tubal ectopic pregnancy; threatened abortion less likely. h/o chlamydia, treated. Return to ED for "
     "fainting or shoulder tip pain.",
     [m("vaginal spotting", "O20.9"), m("LLQ pain", "R10.32"), m("left tubal ectopic pregnancy", "O00.102", POS),
      m("threatened abortion", "O20.0", POS), m("chlamydia", "A74.9", P, True), m("fainting", "R55", H),
      m("shoulder tip pain", "M25.519", H)]),
    ("orthopaedics",
     "Hand clinic: 58F, RHD. R trigger thumb, injected today. L carpal tunnel syndrome, EMG-confirmed, with night paresthesias. "
     "R lateral epicondylitis improving w/ PT. ?early de Quervain's on L. Father had Dupuytren's contracture.",
     [m("R trigger thumb", "M65.311"), m("L carpal tunnel syndrome", "G56.02"), m("night paresthesias", "R20.2", C),
      m("R lateral epicondylitis", "M77.11"), m("de Quervain's", "M65.4", POS), m("Dupuytren's contracture", "M72.0", S)]),
    ("orthopaedics",
     "Ortho consult: 23M FOOSH while skateboarding today. X-ray: nondisplaced fracture of waist of left scaphoid, closed, "
     "initial encounter. Abrasion of left palm. Thumb spica applied. Discussed risk of AVN. Hx R ACL tear 2021 s/p "
     "reconstruction. Denies numbness.",
     [m("nondisplaced fracture of waist of left scaphoid, closed", "S62.025A"), m("Abrasion of left palm", "S60.512"),
      m("AVN", "M87.9", H), m("R ACL tear", "S83.511", P, True), m("numbness", "R20.0", A)]),
    ("infection",
     "ID consult: 66F with chronic osteomyelitis of the left foot with draining sinus (3rd metatarsal head); bone bx grew MRSA. "
     "Diabetic foot ulcer, plantar, probes to bone. ABI normal, no PAD. Hgb 9.1 - anemia of chronic disease. Hx of MRSA "
     "pnuemonia 2022. Plan IV vancomycin x6 wks via PICC.",
     [m("chronic osteomyelitis of the left foot with draining sinus", "M86.472"), m("Diabetic foot ulcer", "E11.621"),
      m("PAD", "I73.9", A), m("anemia of chronic disease", "D63.8"), m("MRSA pnuemonia", "J15.212", P, True)]),
    ("infection",
     "Urgent care: 44M with expanding erythema migrans on R thigh, noticed 3 days after a camping trip. Mild fatigue. "
     "No joint swelling. Dx: early localized Lyme disease; doxycycline x10d. Wife was treated for Lyme last summer. "
     "Return if facial droop.",
     [m("erythema migrans", "A69.20"), m("fatigue", "R53.83"), m("joint swelling", "M25.40", A), m("Lyme disease", "A69.20"),
      m("Lyme", "A69.20", S, False, 1), m("facial droop", "R29.810", H)]),
    ("cardiology",
     "EP clinic: 76F with sick sinus syndrome (tachy-brady), s/p dual-chamber PPM 2023; device check normal. Frequent PVCs, "
     "asymptomatic. Echo: mild TR, EF 60%. Hx of Takotsubo cardiomyopathy 2019, EF since recovered. Denies DOE.",
     [m("sick sinus syndrome", "I49.5"), m("PVCs", "I49.3"), m("TR", "I07.1"),
      m("Takotsubo cardiomyopathy", "I51.81", P, True), m("DOE", "R06.09", A)]),
    ("cardiology",
     "Cards f/u: 68M with atherosclerosis of native arteries of right leg with intermittent claudication (I70.211), walks 1 "
     "block. Acute pericarditis in March, resolved on colchicine. Carotid US: <50% R ICA stenosis. Mixed hyperlipidemia on "
     "statin + ezetimibe. Brother has familial hypercholesterolemia.",
     [m("atherosclerosis of native arteries of right leg with intermittent claudication", "I70.211"), m("I70.211", "I70.211"),
      m("Acute pericarditis", "I30.9", P, True), m("R ICA stenosis", "I65.21"), m("Mixed hyperlipidemia", "E78.2"),
      m("familial hypercholesterolemia", "E78.019", S)]),
]


def find(text: str, needle: str, occurrence: int) -> int:
    """Start of the ``occurrence``-th match of ``needle`` not inside a longer word."""
    left = r"(?<![A-Za-z0-9])" if needle[0].isalnum() else ""
    right = r"(?![A-Za-z0-9])" if needle[-1].isalnum() else ""
    starts = [hit.start() for hit in re.finditer(left + re.escape(needle) + right, text)]
    if len(starts) <= occurrence:
        raise ValueError(f"{needle!r} occurrence {occurrence} not in {text!r}")
    return starts[occurrence]


def build(kb: Path) -> list[dict]:
    connection = sqlite3.connect(kb)
    records, seen_kind = [], Counter()
    for number, (kind, text, mentions) in enumerate(SNIPPETS, 1):
        split = "dev" if seen_kind[kind] % 2 == 0 else "test"
        seen_kind[kind] += 1
        rows = []
        for mention in mentions:
            start = find(text, mention["text"], mention["occurrence"])
            end = start + len(mention["text"])
            assert text[start:end] == mention["text"]
            code = mention["icd10cm"]
            if code is not None and connection.execute("SELECT 1 FROM concepts WHERE id = ?", (f"ICD10CM:{code}",)).fetchone() is None:
                raise ValueError(f"{code} is not in {kb}")
            rows.append({"start": start, "end": end, "text": mention["text"], "icd10cm": code,
                         "assertion": mention["assertion"], "historical": mention["historical"]})
        rows.sort(key=lambda row: row["start"])
        for first, second in zip(rows, rows[1:]):
            assert first["end"] <= second["start"], f"overlapping gold spans in snippet {number}: {first} {second}"
        records.append({"id": f"cn-{number:03d}", "split": split, "kind": kind, "text": text, "mentions": rows})
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kb", type=Path, default=Path.home() / ".cache" / "medlink" / "default-kb.sqlite")
    parser.add_argument("--out", type=Path, default=HERE / "notes.jsonl")
    args = parser.parse_args()
    records = build(args.kb)
    with args.out.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    mentions = [mention for record in records for mention in record["mentions"]]
    print(f"{len(records)} snippets, {len(mentions)} mentions -> {args.out}")
    print("splits:", dict(Counter(record["split"] for record in records)))
    print("mentions by split:", dict(Counter(record["split"] for record in records for _ in record["mentions"])))
    print("assertion:", dict(Counter(mention["assertion"] for mention in mentions)))
    print("historical:", sum(mention["historical"] for mention in mentions), "null codes:", sum(mention["icd10cm"] is None for mention in mentions))


if __name__ == "__main__":
    main()
