"""Health: conditions, diagnoses, symptoms of a condition, drugs, treatment, lab values,
pregnancy and fertility, mental health, addiction and recovery, disability.

Strong terms name something specific (a diagnosis, a drug class or a generic or brand
drug, a procedure, a lab value with a number); weak terms are generic (``surgery``,
``medication``, ``住院``) and need a person bound to them (see :mod:`._score`).
Figurative uses ("allergic to meetings", "this bug is killing me", "对开会过敏") are not
cues: an allergy needs an allergen, and idioms are excluded. Neither is a care profession as
a line of work or study ("counseling and mental health jobs", "a degree in psychology").
"""

from __future__ import annotations

import re

from ._cues import Sentence, Typos, alt
from ._drugs import find_drugs
from ._gate import any_match
from ._types import Cue

__all__ = ["detect", "possible"]

_WEAK_SET = frozenset(
    "surgery|therapy|therapist|meds|medication|medications|pills|prescription|prescribed|"
    "recovery|sponsor|waitlist|chronic|diagnosis|glucose|cholesterol|stroke|seizure|"
    "seizures|relapse|relapsed|transplant|sobriety|counselor|counseling|insulin|statins|"
    "painkillers|steroids|stimulants|opioids|opiates|fertility|pregnancy|remission".split("|")
)
_CONDITIONS_EN = (
    "cancer|tumor|tumour|leukemia|leukaemia|lymphoma|melanoma|carcinoma|sarcoma|myeloma|"
    "metastatic|malignant|benign tumor|diabetes|diabetic|prediabetes|prediabetic|type 1|"
    "type 2|t1d|t2d|hypertension|high blood pressure|low blood pressure|hypotension|"
    "high cholesterol|asthma|asthmatic|epilepsy|epileptic|seizure|seizures|dementia|"
    "alzheimer's|alzheimers|parkinson's|parkinsons|autism|autistic|asperger's|aspergers|adhd|"
    "add|ocd|ptsd|c-ptsd|cptsd|bipolar|schizophrenia|schizophrenic|schizoaffective|psychosis|"
    "psychotic|depression|depressed|depressive|mdd|major depressive|anxiety|gad|"
    "panic attack|panic attacks|panic disorder|social anxiety|eating disorder|anorexia|"
    "anorexic|bulimia|bulimic|binge eating|arfid|bpd|borderline|did|dissociative|"
    "hiv|aids|std|stds|sti|stis|herpes|hpv|chlamydia|gonorrhea|syphilis|hepatitis|hep b|"
    "hep c|tuberculosis|tb|long covid|stroke|heart attack|heart disease|heart condition|"
    "heart failure|afib|a-fib|atrial fibrillation|arrhythmia|tachycardia|pvcs|copd|"
    "emphysema|arthritis|rheumatoid|lupus|fibromyalgia|multiple sclerosis|ms|als|crohn's|"
    "crohns|colitis|ulcerative colitis|celiac|coeliac|ibs|ibd|gerd|acid reflux|migraine|"
    "migraines|migranes|insomnia|narcolepsy|sleep apnea|sleep apnoea|infertile|infertility|"
    "miscarriage|miscarried|stillbirth|pregnant|pregnancy|preggo|expecting a baby|"
    "trimester|ectopic|endometriosis|pcos|pmdd|menopause|perimenopause|hysterectomy|"
    "vasectomy|mastectomy|lumpectomy|c-section|cesarean|caesarean|postpartum|"
    "gestational|preeclampsia|kidney disease|ckd|kidney stones|liver disease|cirrhosis|"
    "fatty liver|thyroid|hypothyroidism|hyperthyroidism|hashimoto's|hashimotos|graves|"
    "anemia|anaemia|gout|psoriasis|eczema|scoliosis|obesity|obese|concussion|tbi|"
    "tinnitus|vertigo|glaucoma|cataracts|macular degeneration|legally blind|blind|deaf|"
    "hard of hearing|hearing loss|hearing aid|hearing aids|cochlear implant|wheelchair|"
    "paralyzed|paraplegic|quadriplegic|amputee|amputation|prosthetic|cerebral palsy|"
    "down syndrome|dyslexia|dyslexic|dyspraxia|tourette's|tourettes|stutter|"
    "chronic pain|chronic fatigue|cfs|me/cfs|pots|ehlers-danlos|eds|sickle cell|"
    "hemophilia|cystic fibrosis|huntington's|spina bifida|pacemaker|stent|blood clot|dvt|"
    "pulmonary embolism|aneurysm|hernia|gallstones|gallbladder|appendicitis|pneumonia|"
    "bronchitis|sinusitis|shingles|mono|covid|positive for|tested positive|kidney stone|"
    "gallstone|blood clots|panic attack|ulcer|ulcers|cyst|cysts|polyp|polyps|fibroids|"
    "kidney failure|liver failure|heart murmur|hypoglycemia|hyperglycemia|"
    "self-harm|self harm|selfharm|cutting myself|suicidal|suicide attempt|overdose|"
    "overdosed|addiction|addicted|alcoholic|alcoholism|alcohol use disorder|"
    "substance abuse|relapse|relapsed|sober|sobriety|clean for|recovery|in recovery|"
    "rehab|detox|aa meeting|aa meetings|na meeting|in aa|in na|12-step|twelve-step|"
    "gender dysphoria|hrt|transitioning|top surgery|disability|disabled|handicapped|"
    "mental illness|mental health condition|struggled with mental health|"
    "struggling with mental health|struggle with mental health|struggles with mental health|"
    "nervous breakdown|burnout leave|"
    "food allergy|allergic reaction|anaphylaxis|anaphylactic|epipen|lactose intolerant|"
    "gluten intolerant|ivf|iui|egg retrieval|egg freezing|embryo transfer|fertility|"
    "trying to conceive|ttc|amh|sperm count|low t|erectile dysfunction|ed meds|"
    "biopsy|lump|mammogram|colonoscopy|mri|ct scan|pet scan|ultrasound|chemo|"
    "chemotherapy|radiotherapy|radiation therapy|immunotherapy|remission|dialysis|"
    "transplant|surgery|post-op|operated on|reconstruction|acl|torn|fractured|broken arm|"
    "broken leg|physical therapy|physio|pt sessions|occupational therapy|cbt|dbt|emdr|"
    "therapy|therapist|psychiatrist|psychologist|counselor|counsellor|counseling|"
    "counselling|oncologist|cardiologist|neurologist|endocrinologist|rheumatologist|"
    "gastroenterologist|obgyn|ob-gyn|urologist|dermatologist|neuro|psych ward|"
    "inpatient|outpatient|hospitalized|hospitalised|in hospital|icu|er visit|a&e|"
    "diagnosed|diagnosis|dx|prescribed|prescription|refill|meds|medication|medications|"
    "pills|antidepressant|antidepressants|antipsychotic|antipsychotics|ssri|ssris|snri|"
    "benzos|benzodiazepines|stimulants|opioids|opiates|painkillers|insulin|inhaler|"
    "statin|statins|blood thinner|blood thinners|birth control|the pill|prep|"
    "antiretroviral|antiretrovirals|steroids|chronic|a1c|hba1c|ldl|hdl|triglycerides|"
    "blood sugar|glucose|cholesterol|blood pressure|bp|tsh|psa|egfr|creatinine|"
    "cd4|viral load|undetectable|platelets|hemoglobin|ferritin|vitamin d level|bmi|"
    "immunocompromised|immunosuppressed|immune disorder|herniated|slipped disc|bulging disc|"
    "sciatica|wisdom teeth|root canal|"
    "waitlist|wait list|sponsor|relapsing|days sober|months sober|years sober|yrs sober|weeks sober"
)
# Drug names the dictionary (:mod:`._drugs`) does not hold as one word of five letters
# or more, devices, and phrases; every other generic or brand name comes from there.
_DRUGS_EN = (
    "propranolol|mounjaro|tirzepatide|zepbound|lantus|hctz|synthroid|euthyrox|truvada|"
    "descovy|genvoya|doxy|augmentin|vicodin|percocet|suboxone|estradiol|progesterone|"
    "testosterone|gonal-f|menopur|ovidrel|symbicort|botox for migraines|insulin pump|cgm|"
    "dexcom|freestyle libre|omnipod|cpap|bipap|nicotine patch|nicotine patches|"
    "nicotine gum|nicotine replacement|quitting smoking|quit smoking|hospice|palliative|"
    "palliative care|baby is due|due date|eating for two|bun in the oven|"
    "morning sickness|expecting our first|expecting a baby|expecting our second|"
    "expecting twins"
)
_TYPOS = Typos(
    [w for w in _CONDITIONS_EN.split("|") if " " not in w and w not in _WEAK_SET and len(w) >= 7]
)
_HEALTH_EN = re.compile(rf"(?<![a-z0-9]){alt(_CONDITIONS_EN + '|' + _DRUGS_EN)}s?(?![a-z])")
_WEAK_EN = frozenset(
    "surgery|therapy|therapist|counselor|counsellor|counseling|counselling|psychologist|"
    "meds|medication|medications|pills|prescription|prescribed|refill|recovery|sponsor|"
    "waitlist|wait list|chronic|diagnosis|dx|blood pressure|bp|glucose|cholesterol|"
    "blood sugar|bmi|mri|ct scan|ultrasound|lump|neuro|torn|blind|deaf|positive for|"
    "reconstruction|acl|statin|insulin|inhaler|anxiety|depressed|burnout leave|add|ms|"
    "tb|als|did|eds|pots|mono|covid|gad|cgm|prep|the pill|fertility|relapse|relapsed|"
    "outpatient|inpatient|icu|er visit|a&e|in hospital|rehab|detox|remission|stent|dbt|"
    "cbt|emdr|psych ward|physio|pt sessions|pregnancy|trimester|gallbladder|hernia|"
    "pneumonia|bronchitis|sinusitis|shingles|vertigo|tinnitus|stutter|thyroid|"
    "physical therapy|occupational therapy|counseling|egfr|psa|tsh|cd4|platelets|"
    "hemoglobin|ferritin|biopsy|ldl|hdl|triglycerides|a1c|hba1c|creatinine|sober|"
    "sobriety|clean for|seizure|seizures|stroke|mammogram|colonoscopy|undetectable|"
    "viral load|amh|hrt|steroids|stimulants|painkillers|opioids|opiates|transplant".split("|")
)
_CLEAN_EN = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a few|several|"
    r"a couple of?)\s+(?:days?|weeks?|months?|years?|yrs?)\s+(?:clean|sober)\b"
    r"|\bclean (?:from|off)\s+\w+"
)
_LAB_EN = re.compile(
    r"\b(?:a1c|hba1c|ldl|hdl|tsh|psa|egfr|creatinine|cd4|amh|ferritin|glucose|"
    r"blood sugar|bp|blood pressure|triglycerides|platelets|hemoglobin|bmi)\b[^.;\n]{0,25}?"
    r"\d{1,3}(?:[./]\d{1,3})?"
)
# CA, GA and OA are also US states: after "in" / "at" they count only before "meeting".
_RECOVERY_GROUP = re.compile(
    r"\b(?:go to|going to|in|at|attend|attending|joined|started) (?:AA|NA|Al-Anon|"
    r"SMART Recovery|SAA)\b"
    r"|\b(?:go to|going to|attend|attending|joined|started) (?:CA|GA|OA)\b"
    r"|\b(?:CA|GA|OA) meetings?\b"
)
# A care profession as a line of work or study ("counseling and mental health jobs", "a
# degree in psychology", "working in mental health"): the field, not a treatment.
_CARE = r"(?:counsel+ing|counsel+ors?|therapy|therapists?|psycholog(?:y|ists?)|mental health)"
_FIELD_EN = re.compile(
    rf"{_CARE}(?:\s+(?:and|or|&)\s+{_CARE})*"
    r"(?:\s+(?:work|career|job|jobs|careers|positions?|roles?|field|degrees?|programs?|"
    r"courses?|classes|certification|training|workshops?|career options)\b"
    r"|\s+as\s+a\s+(?:career|job|profession)\b"
    r"|\s+or\s+work(?:ing)?\s+in\b)"
    rf"|\b(?:work(?:ing)?\s+in|careers?\s+in|jobs?\s+in|degrees?\s+in|major(?:ing)?\s+in|"
    rf"studying|job\s+as\s+an?|work(?:ing)?\s+as\s+an?)\s+(?:the\s+)?{_CARE}"
)
_LAB_ZH = re.compile(
    r"(?:血糖|空腹|餐后|糖化|血压|血脂|胆固醇|尿酸|肌酐|转氨酶|甘油三酯|低密度|高密度|甲功|"
    r"促甲状腺|血红蛋白|白细胞|血小板|hcg|孕酮|amh)[^，。,.!?！？\d]{0,6}\d"
)
_DOSE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:mg|mcg|µg|ml|iu|units)\b|\d+(?:\.\d+)?\s?(?:毫克|片|粒)")
_ALLERGY_EN = re.compile(
    r"\ballergic to\s+(?:\w+\s+){0,2}?(?:penicillin|amoxicillin|sulfa|aspirin|ibuprofen|"
    r"nsaids|codeine|morphine|latex|peanuts?|tree nuts?|nuts|shellfish|fish|eggs?|milk|"
    r"dairy|soy|wheat|gluten|sesame|bee stings?|wasps?|pollen|dust mites?|mold|cats|dogs|"
    r"iodine|contrast|antibiotics|medication|\w+cillin|\w+mycin)\b"
)
# Word formation names a procedure or a condition whatever the word: an excision, an
# incision, a stoma, a repair, a scope, an inflammation, a replaced joint.
_MORPHOLOGY_EN = re.compile(
    r"\b[a-z]{3,}(?:ectomy|otomy|ostomy|plasty|oscopy|orrhaphy)s?\b"
    r"|\b(?!(?:arthritis|bronchitis|colitis|sinusitis)\b)[a-z]{4,}itis\b"
    r"|\b(?:knee|hip|shoulder|joint|valve|disc|disk|ankle|elbow|lens) replacements?\b"
    r"|\b(?:bypass|transplant|cataract|bariatric|gastric sleeve|lap band|heart|brain|spinal|"
    r"back|cancer) (?:surgery|operation|op)\b|\blap band\b|\bgastric (?:sleeve|bypass)\b"
    r"|\b(?:cataract|cataracts)\b"
    r"|\b(?:rotator cuff|meniscus|acl|mcl|hernia|spinal|spine|disc|tendon|ligament|achilles) "
    r"(?:repair|surgery|tear|fusion|reconstruction)\b"
    r"|\b(?:appendix|tonsils|adenoids|gallbladder|spleen|uterus|ovaries|ovary|thyroid|"
    r"wisdom teeth|kidney stones?|gallstones?|polyps?|a lump|a tumou?r) "
    r"(?:out|removed|taken out|cut out)\b"
)
# How people say it without the clinical word: the class, not the sentence.
_EUPHEMISM_EN = re.compile(
    r"\b(?:my|a|the|our) (?:shrink|head doctor|headshrinker|psych|psych doc)\b(?![- ]wrap)"
    r"|\bon (?:something|meds|a pill|pills|tablets) for (?:my|the|it|this)\b"
    r"|\bon (?:a little |some )?something to help (?:me )?(?:with )?(?:my )?(?:sleep|mood|"
    r"nerves|anxiety|focus)\b"
    r"|\b(?:something|a pill|pills|tablets|meds) for (?:my )?(?:mood|nerves|anxiety|"
    r"sleep|depression|focus|head|the voices|my heart|blood pressure|sugar)\b"
    r"(?! (?:board|boards|ring|lighting|music|playlist))"
    r"|\b(?:my|a) (?:nervous |mental )?breakdown\b|\bmy nerves\b"
    r"|\b(?:72-hour|psych|psychiatric|involuntary|5150) hold\b|\b5150(?:'?d)?\b"
    r"|\bseeing (?:someone|somebody|a (?:professional|specialist)) (?:for|about) (?:my|it)\b"
    r"|\b(?:my|a) (?:sugar|blood sugar|drinking|drug|pill|weight|heart|thyroid) "
    r"(?:problem|problems|issue|issues|condition)\b"
    r"|\b(?:hear|hearing) voices\b|\bup(?:ped|ping)? (?:my|the) dose\b|\b(?:my|the) dose\b"
)
_BENIGN_EN = re.compile(
    r"prescription (?:for )?(?:new )?(?:glasses|sunglasses|lenses|contacts|goggles)|"
    r"(?:surgery|therapy|treatment) (?:on|for) (?:the|my|our) (?:car|code|codebase|bike|garden|"
    r"house|website|laptop)"
)
_FIGURATIVE_EN = re.compile(
    r"\b(?:killing me|kills me|gives? me (?:a )?(?:cancer|a heart attack|an aneurysm|ptsd)|"
    r"so ocd about|a bit ocd|my ocd about|dying of (?:laughter|boredom)|"
    r"heart attack (?:of|on) a plate|brain ?rot|sick beat|sick of|sick burn|"
    r"(?:gonna|going to|about to) have a (?:stroke|heart attack|seizure|breakdown)|"
    r"emotional damage|"
    r"(?:it's|that's|this is|is) (?:pure |literally |absolute )?(?:cancer|aids|autistic)\b|"
    r"\bso (?:depressed|ocd|adhd|bipolar|autistic|anorexic|paranoid|triggered) (?:that|about|"
    r"because|when|rn|lol)\b|\bdepressed (?:about|that) (?:the|my|our|this|that)|"
    r"depressing|pill to swallow|chill pill|therapy session with my|retail therapy|"
    r"(?:form|kind|sort|type|bit|dose) of therapy|(?:is|was|are) (?:my|pure|cheap|free) therapy|"
    r"shopping therapy|music therapy playlist|allergic to (?:meetings|mondays|work|people|"
    r"mornings|math|exercise|effort|drama|small talk|email|emails|cardio))"
)

_CONDITIONS_ZH = (
    "癌|肿瘤|白血病|淋巴瘤|骨髓瘤|糖尿病|高血压|低血压|高血脂|高血糖|血糖|血脂|血压高|"
    "心脏病|冠心病|心梗|心衰|心肌炎|心律不齐|早搏|房颤|心动过速|中风|脑梗|脑出血|癫痫|"
    "哮喘|气喘|抑郁|焦虑症|焦虑障碍|惊恐发作|惊恐障碍|躁郁|双相|精神分裂|强迫症|自闭症|"
    "孤独症|多动症|阿斯伯格|阿尔茨海默|老年痴呆|痴呆|帕金森|艾滋|hiv|乙肝|丙肝|肝炎|"
    "肺结核|结核|胃炎|胃溃疡|肠炎|结肠炎|克罗恩|肠易激|ibs|鼻炎|皮炎|湿疹|银屑病|牛皮癣|"
    "痛风|关节炎|类风湿|红斑狼疮|狼疮|甲亢|甲减|甲状腺|桥本|不孕|不育|流产|小产|胎停|"
    "怀孕|怀了|孕期|孕周|孕早期|孕中期|孕晚期|备孕|试管|促排|取卵|移植|胚胎|产检|产后|"
    "月子|坐月子|剖腹产|顺产|早产|宫外孕|多囊|子宫肌瘤|子宫|卵巢|乳腺|前列腺|痔疮|肾病|"
    "肾衰|尿毒症|透析|肝病|肝硬化|脂肪肝|贫血|厌食症|暴食症|进食障碍|创伤后应激|ptsd|"
    "失眠|偏头痛|结石|胆结石|胆囊|阑尾|疝气|肺炎|支气管炎|过敏性|荨麻疹|青光眼|白内障|"
    "弱视|失明|视障|听障|耳聋|失聪|听力|助听器|人工耳蜗|残疾|残障|瘫痪|截肢|轮椅|脊柱侧弯|"
    "骨折|韧带|半月板|椎间盘|腰突|颈椎病|自伤|自残|自杀|轻生|想死|割腕|成瘾|上瘾|戒酒|"
    "戒毒|戒赌|酗酒|酒精依赖|复吸|美沙酮|性病|梅毒|淋病|衣原体|hpv|疱疹|尖锐湿疣|阳性|"
    "新冠|甲流|化疗|放疗|靶向|免疫治疗|手术|开刀|术后|切除|住院|出院|确诊|病历|病史|"
    "诊断|查出|复查|复诊|吃药|服药|药物|处方|降压药|降糖药|安眠药|抗抑郁药|抗焦虑|止痛药|"
    "胰岛素|激素|心理咨询|咨询师|心理医生|精神科|心内科|肿瘤科|内分泌科|神经科|"
    "妇产科|生殖科|康复治疗|康复科|理疗|针灸治疗|挂号|看病|生病|得病|病情|病假|"
    "血常规|肌酐|尿酸|转氨酶|糖化|血红蛋白|胆固醇|低密度|甘油三酯|甲功|tsh|hpv|"
    "体检报告|病理|活检|穿刺|核磁|ct|b超|胃镜|肠镜|心电图|holter|动态心电|"
    "睡眠呼吸暂停|打呼停|呼吸机|过敏|三高|身心科|脊椎炎|脊柱炎|强直性|洗肾|回诊|思觉失调|忧郁症|心脏搭桥|冠脉搭桥|搭桥手术|支架手术|"
    "关节置换|膝关节置换|髋关节置换|换了关节|做了胃镜|高度近视|散光|裂孔|视网膜|眼底病|黄斑|免疫力低下|免疫缺陷|预产期|有喜了|孕吐|安胎|保胎|怀咗|怀上|第二胎|二胎|头胎|一型|二型|1型|2型|支架|起搏器|假肢|造口|胰岛素泵|血糖仪|透析"
)
_DRUGS_ZH = (
    "舍曲林|左洛复|氟西汀|百忧解|帕罗西汀|赛乐特|艾司西酞普兰|来士普|西酞普兰|文拉法辛|"
    "度洛西汀|米氮平|安非他酮|曲唑酮|阿米替林|碳酸锂|拉莫三嗪|丙戊酸|喹硫平|思瑞康|"
    "奥氮平|利培酮|阿立哌唑|氯氮平|哌甲酯|专注达|择思达|托莫西汀|阿普唑仑|氯硝西泮|"
    "地西泮|安定|劳拉西泮|唑吡坦|佐匹克隆|右佐匹克隆|丁螺环酮|普萘洛尔|加巴喷丁|"
    "普瑞巴林|托吡酯|左乙拉西坦|卡马西平|二甲双胍|格华止|司美格鲁肽|诺和|甘精|门冬|"
    "阿托伐他汀|立普妥|瑞舒伐他汀|可定|辛伐他汀|他汀|氨氯地平|络活喜|硝苯地平|缬沙坦|"
    "厄贝沙坦|氯沙坦|美托洛尔|倍他乐克|华法林|利伐沙班|阿哌沙班|氯吡格雷|波立维|"
    "阿司匹林肠溶|左甲状腺素|优甲乐|雷替斯|甲巯咪唑|赛治|泼尼松|强的松|甲氨蝶呤|"
    "阿达木|修美乐|羟氯喹|恩替卡韦|替诺福韦|拉米夫定|抗病毒药|多西环素|阿奇霉素|"
    "青霉素|头孢|伐昔洛韦|阿昔洛韦|他莫昔芬|来曲唑|阿那曲唑|赫赛汀|PD-1|美沙酮|"
    "纳曲酮|丁丙诺啡|地屈孕酮|达芙通|黄体酮|雌激素|孕酮|促排卵|克罗米芬|来曲唑|"
    "短效避孕药|优思明|紧急避孕|毓婷|达英|非那雄胺|米诺地尔|西地那非|他达拉非|"
    "沙丁胺醇|万托林|布地奈德|信必可|舒利迭|孟鲁司特|奥美拉唑|泮托拉唑|美沙拉嗪|"
    "舒马普坦|利扎曲普坦|胰酶|降压|降糖|抗凝|抗病毒|止痛片|布洛芬缓释|芬必得|"
    # brand names in mainland and Taiwan use (the dictionary above is English only)
    "黛力新|思诺思|怡诺思|再普乐|拜新同|来得时|捷诺维|安达唐|欧唐静|诺和锐|优泌林|拜糖平|"
    "格列美脲|阿卡波糖|安博维|科素亚|波依定|舒降之|喜普妙|博乐欣|欣百达|瑞美隆|维思通|"
    "安律凡|德巴金|利必通|得理多|开浦兰|妥泰|舒乐安定|艾司唑仑|安理申|美多芭|息宁|"
    "思诺思|百忧解|乐途|悦宁|郁乐复|力月西|赛乐特|安非他命|利他林|专思达"
)
_HEALTH_ZH = re.compile(
    alt(_CONDITIONS_ZH + "|" + _DRUGS_ZH)
    + r"|[\u4e00-\u9fff](?:症|癌|瘤)(?![状])"
    + r"|(?:吃|服|用|打|开)[^，。,.!?！？]{0,6}药"
)
_WEAK_ZH = frozenset(
    "手术|开刀|住院|出院|吃药|服药|药物|处方|挂号|看病|生病|得病|病情|病假|复查|复诊|理疗|"
    "激素|听力|阳性|诊断|切除|术后|体检报告|核磁|ct|b超|胃镜|肠镜|心电图|血糖|血脂|血压高|"
    "胆固醇|尿酸|转氨酶|过敏|失眠|咨询师|心理咨询|结石|胆囊|阑尾|子宫|卵巢|乳腺|前列腺|"
    "移植|胚胎|月子|坐月子|新冠|甲流|肺炎|支气管炎|韧带|半月板|骨折|想死|降压|降糖|抗凝|"
    "抗病毒|低密度".split("|")
)
# A specialty or disease naming an event ("心内科新技术研讨会") or an institution
# ("肿瘤医院", "胸科医院"), not a patients' meeting or a stay.
_EVENT_ZH = re.compile(
    r"(?:(?!病友|患者|家属)[^，。,.!?！？、\s]){0,6}?"
    r"(?:交流大会|交流会|研讨会|大会|论坛|峰会|学术会议|年会|博览会|展览会|讲座|招聘会|培训班)"
    r"|(?:科)?(?:医院|专科医院|研究所|研究院|研究中心|学会|协会|基金会|领域)"
)
_VISIT_ZH = re.compile(r"参观|考察|游览|探访|实习|采访")
"""A visit, a tour or a placement: the speaker saw a hospital, nobody was treated."""
_CLAUSE_BREAK_ZH = re.compile(r"[，,；;：:]")


def _clause_of(text: str, pos: int) -> str:
    """The clause of ``text`` (between commas, semicolons, colons) that holds ``pos``."""
    starts = [m.end() for m in _CLAUSE_BREAK_ZH.finditer(text, 0, pos)]
    end = _CLAUSE_BREAK_ZH.search(text, pos)
    return text[starts[-1] if starts else 0 : end.start() if end else len(text)]


_STAY_ZH = re.compile(r"住院|看病|就诊|确诊|复查|化疗|治疗中|陪[^，。]{0,4}(?:看|住)|挂号")


_ASKING = re.compile(
    r"^\W*(?:is|are|was|does|do|did|can|could|should|would|will|what|what's|how|why|which|"
    r"when|where|who)\b"
)
_ABOUT_DRUG = re.compile(
    r"(?:'s)?\s+(?:ads?|adverts?|commercials?|campaigns?|makers?|patents?|prices?|shortages?|"
    r"recalls?|lawsuits?|stock|sales|trials?|launch)\b"
)


def _in_latin_word(low: str, start: int, end: int) -> bool:
    """True when ``low[start:end]`` is part of a longer Latin word or number."""
    before = low[start - 1] if start > 0 else " "
    after = low[end] if end < len(low) else " "
    return (before.isascii() and before.isalnum()) or (after.isascii() and after.isalnum())


_ALLERGY_ZH = re.compile(
    r"(?:青霉素|头孢|阿司匹林|磺胺|布洛芬|药物|花生|坚果|海鲜|虾|蟹|鸡蛋|牛奶|乳糖|麸质|"
    r"小麦|芒果|花粉|尘螨|猫毛|狗毛|酒精|碘|乳胶|蜂|麻药|抗生素|霉素|西林|过敏性|过敏原|"
    r"鼻炎|皮疹|荨麻疹)[^，。,.!?！？]{0,4}过敏|过敏(?:性|原|反应|体质|史)|对[^，。,.!?！？]{0,6}"
    r"(?:青霉素|头孢|阿司匹林|磺胺|药|花生|坚果|海鲜|虾|蟹|鸡蛋|牛奶|乳糖|麸质|芒果|花粉|尘螨|"
    r"猫毛|狗毛|酒精|碘|乳胶|蜂|抗生素)[^，。,.!?！？]{0,3}过敏"
)
_FIGURATIVE_ZH = re.compile(
    r"开玩笑|笑死|哈哈哈|整抑郁|气死|累死|烦死|想死你|要死了|病得不轻|社恐|强迫症犯了|"
    r"玻璃心|尴尬癌|懒癌|拖延症|选择困难症|中二病|公主病|直男癌|重度拖延|穷病|快(?:要)?(?:中风|心梗|抑郁|猝死|吐血|心脏病发)|"
    r"对[^，。,.!?！？]{0,6}(?:开会|上班|加班|工作|早起|数学|运动|人|社交|老板|会议)[^，。,.!?！？]{0,2}过敏"
)


def detect(sent: Sentence) -> list[Cue]:
    """Health cues in one sentence."""
    text = sent.unquoted()
    low = text.lower() if len(text.lower()) == len(text) else text
    cues: list[Cue] = []
    reason = "a health condition, diagnosis, treatment, medication or lab value"
    if sent.zh:
        if _FIGURATIVE_ZH.search(text):
            return []
        for m in _HEALTH_ZH.finditer(low):
            word = m.group(0)
            if word.isascii() and _in_latin_word(low, m.start(), m.end()):
                continue  # "ct" of "construction" in an e-mail address
            visit = _VISIT_ZH.search(_clause_of(low, m.start())) is not None
            if (_EVENT_ZH.match(low, m.end()) or visit) and not _STAY_ZH.search(low):
                continue  # an event, a place or a visit: 心内科交流大会, 肿瘤医院, 参观
            if word == "过敏" and not _ALLERGY_ZH.search(text):
                continue
            kind = (
                "weak"
                if word in _WEAK_ZH or word.startswith(("吃", "服", "用", "打", "开"))
                else "strong"
            )
            cues.append(Cue("health", reason, m.start(), m.end(), kind))  # type: ignore[arg-type]
    if _FIGURATIVE_EN.search(low):
        return cues
    fields = [m.span() for m in _FIELD_EN.finditer(low)]
    for m in _HEALTH_EN.finditer(low):
        word = m.group(0)
        kind = "weak" if word in _WEAK_EN or word.rstrip("s") in _WEAK_EN else "strong"
        if word in (
            "add",
            "ms",
            "did",
            "tb",
            "als",
            "eds",
            "pots",
            "mono",
            "gad",
            "prep",
            "ed meds",
        ):
            if text[m.start() : m.end()].islower():
                continue
        if _BENIGN_EN.match(low, m.start()) or any(a <= m.start() < b for a, b in fields):
            continue
        if word == "sponsors":
            continue  # an event's sponsors; a recovery sponsor is one person
        cues.append(Cue("health", reason, m.start(), m.end(), kind))  # type: ignore[arg-type]
    if sent.zh:
        for m in _LAB_ZH.finditer(low):
            cues.append(Cue("health", reason, m.start(), m.end(), "strong"))
    # a drug named by the dictionary: strong when the sentence is about a person, weak
    # (needs a disclosure verb) in a question or a remark about the drug itself
    asked = _ASKING.match(low) is not None
    for start, end in find_drugs(low):
        if _in_latin_word(low, start, end):
            continue
        # "Entresto's ad" reads as a name: the drug is not a person
        about = bool(sent.selves) or any(not (a <= start < b) for a, b in sent.others)
        kind = "strong" if about or not asked else "weak"
        if not about and _ABOUT_DRUG.match(low, end):
            kind = "weak"
        cues.append(Cue("health", reason, start, end, kind))  # type: ignore[arg-type]
    morphology = any(h in low for h in _MORPHOLOGY_HINTS)
    for m in _MORPHOLOGY_EN.finditer(low) if morphology else ():
        cues.append(Cue("health", reason, m.start(), m.end(), "weak"))
    euphemism = any(h in low for h in _EUPHEMISM_HINTS)
    for m in _EUPHEMISM_EN.finditer(low) if euphemism else ():
        # "my shrink", "my breakdown": the possessive is the person bound to it
        mine = m.group(0).startswith("my ") or (bool(sent.selves) and not sent.others)
        kind = "strong" if mine else "weak"
        cues.append(Cue("health", reason, m.start(), m.end(), kind))  # type: ignore[arg-type]
    if not cues:
        for start, end, _ in _TYPOS.find(low):
            cues.append(Cue("health", reason, start, end, "strong"))
    for m in _RECOVERY_GROUP.finditer(text):
        cues.append(Cue("health", reason, m.start(), m.end(), "strong"))
    for pattern in (_LAB_EN, _ALLERGY_EN, _CLEAN_EN):
        for m in pattern.finditer(low):
            cues.append(Cue("health", reason, m.start(), m.end(), "strong"))
    if cues and _DOSE.search(low):
        cues = [Cue("health", reason, c.start, c.end, "strong") for c in cues]
    return cues


# Every cue of :func:`detect` is a match of one of these (on the lowered unquoted
# sentence), of _RECOVERY_GROUP (on the unquoted sentence), a dictionary drug or a
# typo; _DOSE only changes the kind of cues already found, and the figurative patterns
# only remove cues.
_GATE_LOW = any_match(_HEALTH_EN, _LAB_EN, _ALLERGY_EN, _CLEAN_EN)
_GATE_LOW_ZH = any_match(_HEALTH_ZH, _LAB_ZH, _HEALTH_EN, _LAB_EN, _ALLERGY_EN, _CLEAN_EN)
_MORPHOLOGY_HINTS = (
    "tomy", "plasty", "scopy", "rrhaphy", "itis", "replacement", "surgery", "operation",
    " op", "lap band", "gastric", "cataract", "repair", "tear", "fusion", "reconstruction",
    " out", "removed",
)  # fmt: skip
_EUPHEMISM_HINTS = (
    "shrink", "head doctor", "psych", "something", "pill", "tablet", "meds", "breakdown",
    "nerves", "hold", "5150", "seeing some", "a professional", "a specialist", "problem",
    "issue", "condition", "voices", "dose",
)  # fmt: skip
"""Every match of :data:`_MORPHOLOGY_EN` (:data:`_EUPHEMISM_EN`) holds one of these
substrings: a substring test is much cheaper than the regex on ordinary text."""


def possible(sent: Sentence) -> bool:
    """False only when :func:`detect` finds no cue in ``sent`` (a cheap pre-filter)."""
    text, low = sent.unquoted_low
    gate = _GATE_LOW_ZH if sent.zh else _GATE_LOW
    return (
        gate.search(low) is not None
        or _RECOVERY_GROUP.search(text) is not None
        or bool(_TYPOS.find(low))
        or bool(find_drugs(low))
        or (any(h in low for h in _MORPHOLOGY_HINTS) and _MORPHOLOGY_EN.search(low) is not None)
        or (any(h in low for h in _EUPHEMISM_HINTS) and _EUPHEMISM_EN.search(low) is not None)
    )
